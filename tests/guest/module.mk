# The witness guest: a freestanding x86-64 payload for `kvmlu-vmm --payload`
# (tests/guest/witness.c says what it does). Built with the host gcc, no
# libc, linked at KVMLU_PAYLOAD_ENTRY by witness.ld, then turned into the
# flat binary the VMM loads: build/guest/witness.bin.

GUEST_DIR := $(B)/guest
GUEST_OBJDIR := $(GUEST_DIR)/obj
GUEST_SRCS := tests/guest/entry.S tests/guest/cpu_setup.c tests/guest/fatal.c \
	tests/guest/serial.c tests/guest/boot_id.c tests/guest/boot_info.c \
	tests/guest/pattern.c tests/guest/slots.c tests/guest/witness.c \
	tests/guest/freestanding_mem.c
GUEST_OBJS := $(patsubst tests/guest/%,$(GUEST_OBJDIR)/%.o,$(GUEST_SRCS))
GUEST_CFLAGS := -std=c11 $(WARN) -Iinclude -ffreestanding -nostdlib -fno-pic -fno-pie \
	-mno-red-zone -mgeneral-regs-only -fno-stack-protector -fno-asynchronous-unwind-tables \
	-fcf-protection=none -O2 -g
GUEST_LDFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,--no-warn-rwx-segments -Wl,-T,tests/guest/witness.ld

$(GUEST_OBJDIR)/%.c.o: tests/guest/%.c
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) -MMD -MP -c $< -o $@
$(GUEST_OBJDIR)/%.S.o: tests/guest/%.S
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) -MMD -MP -c $< -o $@

$(GUEST_DIR)/witness.elf: $(GUEST_OBJS) tests/guest/witness.ld
	$(CC) $(GUEST_CFLAGS) $(GUEST_LDFLAGS) -o $@ $(GUEST_OBJS)

$(GUEST_DIR)/witness.bin: $(GUEST_DIR)/witness.elf
	objcopy -O binary $< $@

GUEST_BINS += $(GUEST_DIR)/witness.bin
DEPFILES += $(GUEST_OBJS:.o=.d)
