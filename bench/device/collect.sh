#!/usr/bin/env bash
# Runs hostlink.cu three times on the GPU machine at hand and keeps what PROVENANCE.txt needs to
# describe it (GPU, link, CPU, NUMA, driver). Usage: bash bench/device/collect.sh OUTDIR NAME
# Writes OUTDIR/NAME.csv, NAME-run2.csv, NAME-run3.csv, NAME-log.txt, NAME-sys.txt, NAME-topo.txt.
set -euo pipefail
out=$1 name=$2
here=$(cd "$(dirname "$0")" && pwd)
nvcc -O2 -arch=sm_90 -o /tmp/hostlink "$here/hostlink.cu"
for run in 1 2 3; do
  csv=$out/$name.csv
  [ "$run" = 1 ] || csv=$out/$name-run$run.csv
  echo "== run $run $(date -u +%FT%TZ)" >>"$out/$name-log.txt"
  /tmp/hostlink "$csv" 2>>"$out/$name-log.txt"
done
nvidia-smi topo -m >"$out/$name-topo.txt" 2>&1 || true
{
  echo "== date"; date -u
  echo "== nvidia-smi"; nvidia-smi
  echo "== nvidia-smi -q (PCI, clocks)"; nvidia-smi -q -d PCIE,CLOCK,POWER 2>&1 | head -150 || true
  nvidia-smi -q | sed -n '/PCI$/,/Tx Throughput/p' || true
  echo "== lscpu"; lscpu
  echo "== numa"; (numactl -H 2>/dev/null || ls /sys/devices/system/node)
  echo "== meminfo"; head -3 /proc/meminfo
  echo "== uname"; uname -a
  echo "== nvcc"; nvcc --version | tail -2
  echo "== lspci"; (lspci -vv 2>/dev/null | grep -i -A40 nvidia | grep -i "lnk\|nvidia\|numa" || echo "no lspci")
  echo "== sysfs link"; for d in /sys/bus/pci/devices/*; do
    [ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] && echo "$d $(cat "$d"/current_link_speed "$d"/current_link_width "$d"/max_link_speed "$d"/numa_node 2>/dev/null | tr '\n' ' ')"; done
} >"$out/$name-sys.txt" 2>&1
