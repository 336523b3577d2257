// SPDX-License-Identifier: GPL-2.0
/*
 * KVM_LINK_GUEST_MEMFD: one guest_memfd's memory in a new VM, no copy
 * (see gmem_link.h for the uAPI and who calls this when).
 *
 * Lifecycle of a relink: link every given file into the VM first (the
 * step the kernel may refuse), vet and map the links like any adopted
 * file, and only then swap the memslots from the VM's fresh files to the
 * links. Up to the swap a failure leaves the VM exactly as it was; a
 * failed bind of the links puts the fresh files back in their slots.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "guestmem/backend.h"
#include "common/err.h"
#include "guestmem/gmem_link.h"
#include "kvmlu/kvm_uapi.h"

int guestmem_gmem_can_link(int vm_fd, char *err, size_t errlen)
{
	int r = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_GUEST_MEMFD_LINK);

	if (r < 0) {
		int ret = -errno;

		kvmlu_err(err, errlen, 0,
			      "guest_memfd link: KVM_CHECK_EXTENSION(KVM_CAP_GUEST_MEMFD_LINK %d) on vm fd %d: %s",
			      KVM_CAP_GUEST_MEMFD_LINK, vm_fd, strerror(errno));
		return ret;
	}
	return r > 0;
}

/* What the kernel's refusal means (kernel/README.md lists the errnos). */
static const char *gmem_link_hint(int e)
{
	switch (e) {
	case EOPNOTSUPP:
		return "the memory is not shared (no GUEST_MEMFD_FLAG_INIT_SHARED) or this VM has private memory";
	case EINVAL:
		return "not a guest_memfd, or this VM does not support its flags";
	case EBADF:
		return "not an open file";
	default:
		return strerror(e);
	}
}

int guestmem_gmem_link(int vm_fd, int src_fd, char *err, size_t errlen)
{
	struct kvm_link_guest_memfd req;
	int r, fd;

	r = guestmem_gmem_can_link(vm_fd, err, errlen);
	if (r < 0)
		return r;
	if (r == 0) {
		kvmlu_err(err, errlen, 0,
			      "kernel cannot link guest_memfd (needs kvmlu kernel patch): no KVM_CAP_GUEST_MEMFD_LINK (%d) on vm fd %d",
			      KVM_CAP_GUEST_MEMFD_LINK, vm_fd);
		return -EOPNOTSUPP;
	}
	if (src_fd < 0) {
		kvmlu_err(err, errlen, 0, "KVM_LINK_GUEST_MEMFD: no guest_memfd to link (fd %d)", src_fd);
		return -EBADF;
	}
	memset(&req, 0, sizeof(req));
	req.fd = (__u32)src_fd;
	fd = ioctl(vm_fd, KVM_LINK_GUEST_MEMFD, &req);
	if (fd < 0) {
		int ret = -errno;

		kvmlu_err(err, errlen, 0, "KVM_LINK_GUEST_MEMFD fd %d into vm fd %d: %s (%s)",
			      src_fd, vm_fd, strerror(errno), gmem_link_hint(errno));
		return ret;
	}
	return fd;
}

static void close_links(int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

int guestmem_gmem_relink(struct guestmem *gm, int vm_fd, const int *src_fds,
			 char *err, size_t errlen)
{
	int links[GUESTMEM_MAX_REGIONS];
	struct guestmem next;
	char msg[256] = "";
	unsigned int i;
	int ret;

	if (!gm || !src_fds)
		return -EINVAL;
	if (gm->backend != GUESTMEM_GUEST_MEMFD || gm->nr == 0 || gm->nr > GUESTMEM_MAX_REGIONS) {
		kvmlu_err(err, errlen, 0, "guest_memfd relink: RAM is %s with %u regions, need guest_memfd",
			      guestmem_backend_name(gm->backend), gm->nr);
		return -EINVAL;
	}
	for (i = 0; i < GUESTMEM_MAX_REGIONS; i++)
		links[i] = -1;
	for (i = 0; i < gm->nr; i++) {
		ret = guestmem_gmem_link(vm_fd, src_fds[i], msg, sizeof(msg));
		if (ret < 0) {
			kvmlu_err(err, errlen, 0, "region %u: %s", i, msg);
			goto err_links;
		}
		links[i] = ret;
	}
	/* The same plan on the links; adopt vets each (a guest_memfd, big enough). */
	next = *gm;
	for (i = 0; i < GUESTMEM_MAX_REGIONS; i++) {
		next.r[i].fd = -1;
		next.r[i].hva = NULL;
	}
	ret = guestmem_adopt(&next, links, err, errlen);
	if (ret)
		goto err_links;
	/* next owns the links now. A slot's file cannot change in place: delete, add. */
	guestmem_unbind(gm, vm_fd);
	ret = guestmem_bind(&next, vm_fd, err, errlen);
	if (ret)
		goto err_rebind;
	guestmem_destroy(gm);
	*gm = next;
	return 0;

err_rebind:
	if (guestmem_bind(gm, vm_fd, msg, sizeof(msg)) && err && errlen)
		snprintf(err + strlen(err), errlen - strlen(err),
			 "; and the VM's own files could not be bound again: %s", msg);
	guestmem_destroy(&next);
	return ret;
err_links:
	close_links(links, GUESTMEM_MAX_REGIONS);
	return ret;
}
