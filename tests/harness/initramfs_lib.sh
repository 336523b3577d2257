# Copying programs into an initramfs staging tree, with the shared
# libraries they load. Sourced (bash) by mkinitramfs.sh, which builds the
# harness host's initramfs, and by fleet/segment.sh, which adds what a
# host managed over SSH needs. Both set $root, the staging tree.

copy_libs() { # copy_libs ELF: the shared libraries ldd names for it
	local lib
	ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^\t\//{print $1}' |
	while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

add_prog() { # add_prog HOST_PATH GUEST_PATH
	mkdir -p "$root$(dirname "$2")"
	cp -L "$1" "$root$2"
	# ldd fails on static binaries and on non-ELF files: nothing to copy.
	if ldd "$1" >/dev/null 2>&1; then
		copy_libs "$1"
	fi
}
