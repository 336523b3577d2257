# The virtio bench's figures, sourced by bench_virtio_io.sh (the QEMU
# host's run) and virtio_io_native.sh (this machine's): both logs carry
# "KVMLU-BENCH KEY=value" lines with the same keys.

vals() { # vals LOG KEY: every KVMLU-BENCH KEY=value in order, one a line
	grep -a -o "KVMLU-BENCH .*" "$1" | grep -o " $2=[^ ]*" | sed 's/.*=//'
}
val() { vals "$1" "$2" | tail -n 1; } # val LOG KEY: the last one
median() { sort -g | awk '{ v[NR] = $1 } END {
	if (NR == 0) { print ""; exit }
	printf "%.2f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratios() { # ratios LOG WHO KEY: WHO/qemu of each round, one a line
	paste -d' ' <(vals "$1" "$2_$3") <(vals "$1" "qemu_$3") |
		awk 'NF == 2 && $2 + 0 > 0 { printf "%.3f\n", $1 / $2 }'
}
per_op() { # per_op LOG WHO KEY STAT DIV: STAT exits per unit of each round, one a line
	paste -d' ' <(vals "$1" "$2_$3_$4") <(vals "$1" "$2_$3_ops") |
		awk -v d="$5" '$1 ~ /^[0-9]+$/ && $2 + 0 > 0 { printf "%.2f\n", $1 / ($2 / d) }'
}

# The workloads: KEY:unit of the exit count:the ops figure's divisor:label
rows="seqwrite_MBps:MiB:1:seq write 1 MiB + fdatasync, MB/s
seqread_MBps:MiB:1:seq read 1 MiB O_DIRECT, MB/s
randread_iops:req:1:rand read 4 KiB O_DIRECT QD1, IOPS
randread32_iops:req:1:rand read 4 KiB O_DIRECT QD32, IOPS
randwrite32_iops:req:1:rand write 4 KiB O_DIRECT QD32, IOPS
tcp_MBps:MB:1000000:TCP stream host -> guest, MB/s
tcpout_MBps:MB:1000000:TCP stream guest -> host, MB/s
tcprr_tps:trans:1:TCP req/resp 64 B, trans/s"
