# Peer test: upstream tools/testing/selftests/liveupdate/luo_stress_sessions, as it
# ships (built by build-peers.sh). 2000 sessions across one kexec.
# Stage 1 runs it with -s 1, then kexec; stage 2 runs -s 2 (lib.sh:
# luo_selftest_stage).
HARNESS_NAME=peer/luo_stress_sessions
HARNESS_TIMEOUT=180

stage1() { luo_selftest_stage luo_stress_sessions; }
stage2() { luo_selftest_stage luo_stress_sessions; }
