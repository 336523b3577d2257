# kvmlu build. `make` builds all userspace into build/; `make check` runs
# every test; `make demo` is the main job; `make bench`, `make fuzz`,
# `make kernel` as the README says.
#
# Every user-facing target first runs scripts/install-deps.sh (a no-op once
# the packages are there), then re-enters make for the real work, so a fresh
# machine needs nothing installed by hand.
#
# Three builds of the same sources:
#   build/            -O2, what `make demo`, `make bench` and users run
#   build/san/        ASan + UBSan, what the tests run
#   build/fuzz/       clang, libFuzzer-instrumented, for `make fuzz`
# and build/test/bin, the programs of build/ relinked with the test hooks
# (common/test_hooks.h) for the QEMU harness: same objects, one more.
# Each folder's module.mk registers its libraries, programs and tests with
# the kvmlu_lib / kvmlu_prog helpers below.

.DEFAULT_GOAL := all
SHELL := /bin/bash
B := build

ENTRY_TARGETS := all check check-fleet demo bench fuzz kernel soak
.PHONY: $(ENTRY_TARGETS) deps clean
ifeq ($(KVMLU_DEPS_DONE),)
$(ENTRY_TARGETS):
	@scripts/install-deps.sh
	@$(MAKE) --no-print-directory KVMLU_DEPS_DONE=1 $@
deps:
	@scripts/install-deps.sh
else

CC := gcc
FUZZ_CC := clang
STD := -std=c11 -D_GNU_SOURCE
WARN := -Wall -Wextra -Werror
INC := -Iinclude -I.
# Debian 12 ships no libfdt.pc; its headers are in /usr/include anyway.
PKGS := json-c libxxhash
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# What every program links; a library adds its own (LIB_<name>_LDLIBS).
LDLIBS := -ljson-c -lpthread -lm

CFLAGS_rel  := $(STD) $(WARN) $(INC) $(PKG_CFLAGS) -O2 -g
CFLAGS_san  := $(STD) $(WARN) $(INC) $(PKG_CFLAGS) -O1 -g \
	-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CFLAGS_fuzz := $(STD) $(WARN) $(INC) $(PKG_CFLAGS) -O1 -g \
	-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
LDFLAGS_rel  :=
LDFLAGS_san  := -fsanitize=address,undefined
LDFLAGS_fuzz := -fsanitize=fuzzer,address,undefined

OBJDIR_rel := $(B)/obj
OBJDIR_san := $(B)/san/obj
OBJDIR_fuzz := $(B)/fuzz/obj
LIBDIR_rel := $(B)/lib
LIBDIR_san := $(B)/san/lib
LIBDIR_fuzz := $(B)/fuzz/lib
BINDIR_rel := $(B)/bin
BINDIR_san := $(B)/san/bin
BINDIR_test := $(B)/test/bin

# The test hooks (common/test_hooks.h). libcommon holds their no-ops
# (common/test_hooks_noop.c), which is what the release programs get; a
# test program links tests/hooks/test_hooks.c ahead of the libraries, so
# the linker never pulls the no-op member from the archive.
TEST_HOOKS_rel := $(OBJDIR_rel)/tests/hooks/test_hooks.o
TEST_HOOKS_san := $(OBJDIR_san)/tests/hooks/test_hooks.o
DEPFILES += $(TEST_HOOKS_rel:.o=.d) $(TEST_HOOKS_san:.o=.d)

# EXTRA_CFLAGS: a folder's own flags, set per target by its module.mk
# (e.g. libvirt's headers for agent/libvirt/ only).
$(OBJDIR_rel)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_rel) $(EXTRA_CFLAGS) -MMD -MP -c $< -o $@
$(OBJDIR_san)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_san) $(EXTRA_CFLAGS) -MMD -MP -c $< -o $@
$(OBJDIR_fuzz)/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CFLAGS_fuzz) $(EXTRA_CFLAGS) -MMD -MP -c $< -o $@

# $(call kvmlu_folder_cflags,FOLDER,FLAGS): FLAGS for the objects of FOLDER only.
kvmlu_folder_cflags = $(foreach b,rel san fuzz,$(eval $(OBJDIR_$(b))/$(1)/%.o: EXTRA_CFLAGS += $(2)))

# Libraries in link order (a library may use those after it).
LIB_ORDER := agent_libvirt agent vmm guestmem common

# $(call kvmlu_lib,NAME,SOURCES): libNAME.a in every build.
define kvmlu_lib
LIB_$(1)_SRCS := $(2)
LIBS_DEFINED += $(1)
$(LIBDIR_rel)/lib$(1).a: $$(patsubst %.c,$(OBJDIR_rel)/%.o,$(2))
	@mkdir -p $$(@D); rm -f $$@; ar rcs $$@ $$^
$(LIBDIR_san)/lib$(1).a: $$(patsubst %.c,$(OBJDIR_san)/%.o,$(2))
	@mkdir -p $$(@D); rm -f $$@; ar rcs $$@ $$^
$(LIBDIR_fuzz)/lib$(1).a: $$(patsubst %.c,$(OBJDIR_fuzz)/%.o,$(2))
	@mkdir -p $$(@D); rm -f $$@; ar rcs $$@ $$^
DEPFILES += $$(foreach b,rel san fuzz,$$(patsubst %.c,$$(OBJDIR_$$(b))/%.d,$(2)))
endef

# libs a program or test links, in LIB_ORDER, for a build; and their LDLIBS
libs_for = $(foreach l,$(LIB_ORDER),$(if $(filter $(l),$(2)),$(LIBDIR_$(1))/lib$(l).a))
ldlibs_for = $(foreach l,$(LIB_ORDER),$(if $(filter $(l),$(1)),$(LIB_$(l)_LDLIBS)))

# $(call kvmlu_prog,NAME,MAIN_SOURCES,LIBS): build/bin/NAME (no-op test
# hooks), build/test/bin/NAME (the same objects with the test hooks) and
# build/san/bin/NAME (test hooks). Only a program linking libcommon has hooks.
hooks_for = $(if $(filter common,$(2)),$(TEST_HOOKS_$(1)))
define kvmlu_prog
PROGS_rel += $(BINDIR_rel)/$(1)
PROGS_test += $(BINDIR_test)/$(1)
PROGS_san += $(BINDIR_san)/$(1)
$(BINDIR_rel)/$(1): $$(patsubst %.c,$(OBJDIR_rel)/%.o,$(2)) $$(call libs_for,rel,$(3))
	@mkdir -p $$(@D)
	$(CC) $(LDFLAGS_rel) -o $$@ $$^ $$(call ldlibs_for,$(3)) $(LDLIBS) $(4)
$(BINDIR_test)/$(1): $$(patsubst %.c,$(OBJDIR_rel)/%.o,$(2)) $$(call hooks_for,rel,$(3)) $$(call libs_for,rel,$(3))
	@mkdir -p $$(@D)
	$(CC) $(LDFLAGS_rel) -o $$@ $$^ $$(call ldlibs_for,$(3)) $(LDLIBS) $(4)
$(BINDIR_san)/$(1): $$(patsubst %.c,$(OBJDIR_san)/%.o,$(2)) $$(call hooks_for,san,$(3)) $$(call libs_for,san,$(3))
	@mkdir -p $$(@D)
	$(CC) $(LDFLAGS_san) -o $$@ $$^ $$(call ldlibs_for,$(3)) $(LDLIBS) $(4)
DEPFILES += $$(foreach b,rel san fuzz,$$(patsubst %.c,$$(OBJDIR_$$(b))/%.d,$(2)))
endef

# $(call kvmlu_unit_test,SOURCE,LIBS): a cmocka test in the sanitizer
# build, with the test hooks
define kvmlu_unit_test
UNIT_TESTS += $(B)/san/test/$(basename $(notdir $(1)))
$(B)/san/test/$(basename $(notdir $(1))): $(OBJDIR_san)/$(basename $(1)).o $(TEST_HOOKS_san) $$(call libs_for,san,$(2))
	@mkdir -p $$(@D)
	$(CC) $(LDFLAGS_san) -o $$@ $$^ $$(call ldlibs_for,$(2)) $(LDLIBS) -lcmocka
DEPFILES += $(OBJDIR_san)/$(basename $(1)).d
endef

# $(call kvmlu_fuzzer,SOURCE,LIBS): a libFuzzer target
define kvmlu_fuzzer
FUZZERS += $(B)/fuzz/bin/$(basename $(notdir $(1)))
$(B)/fuzz/bin/$(basename $(notdir $(1))): $(OBJDIR_fuzz)/$(basename $(1)).o $$(call libs_for,fuzz,$(2))
	@mkdir -p $$(@D)
	$(FUZZ_CC) $(LDFLAGS_fuzz) -o $$@ $$^ $$(call ldlibs_for,$(2)) $(LDLIBS)
DEPFILES += $(OBJDIR_fuzz)/$(basename $(1)).d
endef

# Each folder registers what it builds.
include $(wildcard common/module.mk guestmem/module.mk vmm/module.mk agent/module.mk)
include $(wildcard tests/guest/module.mk tests/unit/module.mk tests/fuzz/module.mk tests/native/module.mk)
include $(wildcard kernel/module.mk tests/bench/module.mk tests/caps/module.mk tests/harness/tools/module.mk)

all: $(PROGS_rel) $(GUEST_BINS)

# The test binaries: the programs with test hooks (build/test/bin for the
# QEMU harness, sanitizer builds), unit tests, payloads, test-only shims.
tests-build: all $(PROGS_test) $(PROGS_san) $(UNIT_TESTS) $(TEST_SHIMS)

check: tests-build
	@tests/run-tests.sh

# The Ansible role's rolling update across two QEMU hosts at once
# (tests/harness/fleet/); `make check` runs it on one host.
check-fleet: all $(PROGS_test)
	@KVMLU_TESTS=harness KVMLU_TEST_FILTER=harness/ansible_rollout KVMLU_FLEET_HOSTS=2 tests/run-tests.sh

GUEST ?= witness
demo: all
	@GUEST=$(GUEST) tests/demo.sh

bench: all
	@tests/bench/run.sh

soak: tests-build
	@tests/soak/run.sh

fuzz: $(FUZZERS)
	@tests/fuzz/run.sh $(FUZZERS)

clean:
	rm -rf $(B)

-include $(DEPFILES)
endif
