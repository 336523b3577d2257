# libguestmem: guest RAM files, memslots, checksums (XXH3).
$(eval $(call kvmlu_lib,guestmem,$(wildcard guestmem/*.c)))
LIB_guestmem_LDLIBS := -lxxhash
