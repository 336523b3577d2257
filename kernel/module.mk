# kernel/: the host kernel. `make kernel` runs kernel/build.sh, which builds
# into the cache (KVMLU_CACHE, default /var/cache/kvmlu) only when the key
# (source version + configs/kernel.fragment + kernel/patches/* + the
# script) is new, then links build/kernel and build/kernel-headers to it.
.PHONY: kernel
kernel:
	@kernel/build.sh
