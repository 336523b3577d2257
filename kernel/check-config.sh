#!/bin/bash
# Checks a resolved kernel .config against a config fragment: every
# "CONFIG_X=val" of the fragment must appear verbatim, every
# "# CONFIG_X is not set" (or CONFIG_X=n) must be unset. Prints one line per
# option and a summary; exits 1 naming the options Kconfig did not keep.
# Used by kernel/build.sh right after olddefconfig.
set -euo pipefail
fragment=$1 config=$2
bad=() n=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=n)
		opt=${line%%=*}
		want="not set" ;;
	CONFIG_*=*)
		opt=${line%%=*}
		want=${line#*=} ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		want="not set" ;;
	*) continue ;;
	esac
	n=$((n + 1))
	have=$(sed -n "s/^$opt=//p" "$config")
	[ -n "$have" ] || have="not set"
	if [ "$have" = "$want" ]; then
		echo "ok      $opt=$want"
	else
		echo "MISSING $opt: asked $want, got $have"
		bad+=("$opt")
	fi
done <"$fragment"
if [ ${#bad[@]} -gt 0 ]; then
	echo "config check: ${#bad[@]} of $n options not as asked: ${bad[*]}"
	exit 1
fi
echo "config check: all $n options as asked"
