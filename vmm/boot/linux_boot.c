// SPDX-License-Identifier: GPL-2.0
/* Linux guest boot: files in, boot memory written, BSP at the entry. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/boot/linux_boot.h"
#include "vmm/boot/linux_bzimage.h"
#include "vmm/boot/linux_load.h"
#include "vmm/err.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

int linux_boot_read_file(const char *what, const char *path, size_t max,
			 void **buf, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *p;
	size_t done = 0;
	ssize_t n;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vmm_err(err, errlen, -errno, "%s %s: %s", what, path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = vmm_err(err, errlen, -errno, "%s %s: fstat: %s", what, path, strerror(errno));
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = vmm_err(err, errlen, -EINVAL, "%s %s: not a regular file", what, path);
		goto err_close;
	}
	if (st.st_size <= 0 || (uint64_t)st.st_size > max) {
		rc = vmm_err(err, errlen, -EFBIG, "%s %s: size %lld, must be 1..%zu bytes",
			     what, path, (long long)st.st_size, max);
		goto err_close;
	}
	p = malloc((size_t)st.st_size);
	if (!p) {
		rc = vmm_err(err, errlen, -ENOMEM, "%s %s: no memory for %lld bytes", what, path,
			     (long long)st.st_size);
		goto err_close;
	}
	while (done < (size_t)st.st_size) {
		n = read(fd, p + done, (size_t)st.st_size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = vmm_err(err, errlen, n < 0 ? -errno : -EIO,
				     "%s %s: read at %zu of %lld: %s", what, path, done,
				     (long long)st.st_size, n < 0 ? strerror(errno) : "file shrank");
			goto err_free;
		}
		done += (size_t)n;
	}
	close(fd);
	*buf = p;
	*len = done;
	return 0;
err_free:
	free(p);
err_close:
	close(fd);
	return rc;
}

static int linux_boot_bsp(struct vcpu *v, const struct linux_load_plan *plan,
			  char *err, size_t errlen)
{
	struct kvm_sregs sr;
	struct kvm_regs r;
	int rc;

	rc = vcpu_get_sregs(v, &sr, err, errlen);
	if (rc)
		return rc;
	linux_load_bsp_regs(plan, &r, &sr);
	rc = vcpu_set_sregs(v, &sr, err, errlen);
	if (rc)
		return rc;
	return vcpu_set_regs(v, &r, err, errlen);
}

int linux_boot(struct vm *vm, const char *kernel, const char *initrd,
	       const char *cmdline, char *err, size_t errlen)
{
	struct linux_load_input in = { 0 };
	struct linux_load_plan plan;
	struct linux_bzimage img;
	void *kbuf = NULL, *ibuf = NULL;
	size_t klen = 0, ilen = 0;
	char why[256];
	int rc;

	if (!vm->nr_vcpus)
		return vmm_err(err, errlen, -EINVAL, "Linux boot: VM has no vCPU");
	rc = linux_boot_read_file("--kernel", kernel, LINUX_BZIMAGE_MAX_SIZE, &kbuf, &klen,
				  err, errlen);
	if (rc)
		return rc;
	rc = linux_bzimage_parse(kbuf, klen, &img, why, sizeof(why));
	if (rc) {
		vmm_err(err, errlen, rc, "--kernel %s: %s", kernel, why);
		goto err_free_kernel;
	}
	if (initrd) {
		rc = linux_boot_read_file("--initrd", initrd, LINUX_INITRD_MAX_SIZE, &ibuf, &ilen,
					  err, errlen);
		if (rc)
			goto err_free_kernel;
	}
	in.image = &img;
	in.initrd = ibuf;
	in.initrd_size = ilen;
	in.cmdline = cmdline ? cmdline : LINUX_BOOT_DEFAULT_CMDLINE;
	in.nr_cpus = vm->nr_vcpus;
	rc = linux_load_plan(&vm->mem, &in, &plan, err, errlen);
	if (rc)
		goto err_free_initrd;
	rc = linux_load_write(&vm->mem, &in, &plan, err, errlen);
	if (rc)
		goto err_free_initrd;
	/* The APs keep KVM's reset state and wait for Linux's INIT/SIPI. */
	rc = linux_boot_bsp(&vm->vcpus[0], &plan, err, errlen);
err_free_initrd:
	free(ibuf);
err_free_kernel:
	free(kbuf);
	return rc;
}
