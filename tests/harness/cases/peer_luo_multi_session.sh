# Peer test: upstream tools/testing/selftests/liveupdate/luo_multi_session, as it
# ships (built by build-peers.sh). Several sessions (some empty, some with memfds) across one kexec.
# Stage 1 runs it with -s 1, then kexec; stage 2 runs -s 2 (lib.sh:
# luo_selftest_stage).
HARNESS_NAME=peer/luo_multi_session
HARNESS_TIMEOUT=180

stage1() { luo_selftest_stage luo_multi_session; }
stage2() { luo_selftest_stage luo_multi_session; }
