# The guest architecture of a VM lane (sourced by scripts/ble-vm/run-lane.sh and
# scripts/gpio-vm/run-lane.sh, not run). Both lanes boot a Debian 12 kernel with virtme-ng:
#   x86_64  the host's kernel (/boot/vmlinuz-*-amd64) and the host's userspace, read-only over 9p
#   arm64   Debian 12's arm64 kernel under qemu-system-aarch64 (TCG, machine virt, cortex-a57:
#           virtme-ng's choice) with a root of bookworm arm64 packages (scripts/arm64-vm/setup.sh,
#           cached); host folders appear in the guest under /lane/NAME
# vm_arch ARCH: sets kernel, release, vm_root (the guest's / on the host), vm_args (vng options)
# and appends what is missing to the array missing (the caller's; call it after the other
# checks: arm64 runs the cached set-up, downloads when cold, only when nothing else is missing).
vm_arch() {
    vm_arch_name=$1
    local qemu
    case $1 in
        x86_64)
            qemu=qemu-system-x86_64
            vm_root=/
            kernel=${OPENCARKEY_VM_KERNEL:-$(ls -1 /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -1)}
            [[ -n $kernel && -r $kernel ]] || missing+=("a kernel image /boot/vmlinuz-*-amd64 (apt install linux-image-amd64)")
            vm_args=(--cwd / --disable-kvm)
            [[ ${OPENCARKEY_VM_KVM:-0} == 1 && -w /dev/kvm ]] && vm_args=(--cwd /)
            ;;
        arm64)
            qemu=qemu-system-aarch64
            local here_arch cache
            here_arch=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
            cache=${OPENCARKEY_AARCH64_CACHE:-/var/cache/opencarkey-aarch64}/vm-arm64
            vm_root=$cache/root
            # The downloads only when nothing else is missing (no lane would run).
            if [[ $(id -u) -eq 0 && ${#missing[@]} -eq 0 ]] && ! "$here_arch/setup.sh" >&2; then
                missing+=("the arm64 guest root and kernel (scripts/arm64-vm/setup.sh failed)")
            fi
            kernel=$vm_root/boot/vmlinuz-$(cat "$cache/release" 2>/dev/null)
            [[ -r $kernel ]] || missing+=("Debian 12's arm64 kernel in $vm_root/boot (scripts/arm64-vm/setup.sh)")
            vm_args=(--arch arm64 --root "$vm_root" --disable-kvm)
            mkdir -p "$vm_root/lane" 2>/dev/null
            ;;
        *) missing+=("a supported --arch (x86_64 or arm64), not '$1'"); return ;;
    esac
    command -v "$qemu" >/dev/null || missing+=("$qemu (apt install $([[ $qemu == *x86_64 ]] && echo qemu-system-x86 || echo qemu-system-arm))")
    release=$(basename "$kernel"); release=${release#vmlinuz-}
}

# vm_share VAR rw|ro HOSTDIR: the guest's path of HOSTDIR into VAR, the vng option sharing it
# onto vm_args. x86_64 sees the host's tree as it is (read-only; rw shares are writable).
vm_share() {
    local -n guest_path=$1
    local mode=$2 dir=$3
    if [[ $vm_arch_name == x86_64 ]]; then
        guest_path=$dir
        [[ $mode == rw ]] && vm_args+=("--rwdir=$dir")
        return 0
    fi
    guest_path=/lane/$(( ${#vm_args[@]} ))
    mkdir -p "$vm_root$guest_path"
    vm_args+=("--${mode}dir=$guest_path=$dir")
}

# elf_arch FILE: aarch64, x86_64 or unknown (the ELF header's e_machine).
elf_arch() {
    case $(od -An -t u2 -j 18 -N 2 "$1" 2>/dev/null | tr -d ' ') in
        183) echo aarch64 ;; 62) echo x86_64 ;; *) echo unknown ;;
    esac
}
