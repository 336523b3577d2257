# libcommon: what agent/ and vmm/ share, on json-c only: errors, clocks,
# JSON lines (the one wire protocol), LUO sessions, fd passing.
$(eval $(call kvmlu_lib,common,$(wildcard common/*.c)))
