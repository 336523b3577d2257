# Test-only helpers of the native tests, in the sanitizer build's test
# folder (never in build/bin): the LD_PRELOAD shim that injects faults at
# the messages of a live upgrade (upgrade_fault_shim.c).
TEST_SHIMS += $(B)/san/test/upgrade_fault_shim.so
$(B)/san/test/upgrade_fault_shim.so: tests/native/upgrade_fault_shim.c
	@mkdir -p $(@D)
	$(CC) $(STD) $(WARN) -O1 -g -fPIC -shared -o $@ $< -ldl
