/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The futex ABI the guest programs use, for uapi headers older than the
 * series (FUTEX_PREALLOC_HASH, PR_FUTEX_HASH, FUTEX_ATTACH) or than Linux
 * 5.14-6.16 (FUTEX_LOCK_PI2, futex_waitv, futex_wake/futex_wait/
 * futex_requeue, futex2 flags, FUTEX2_NUMA, FUTEX2_MPOL, FUTEX_NO_NODE).
 * Include after <linux/futex.h> and <sys/syscall.h>.
 */
#ifndef FF_ABI_H
#define FF_ABI_H

#ifndef FUTEX_PREALLOC_HASH
#define FUTEX_PREALLOC_HASH	127
#endif
#ifndef FUTEX_ATTACH
#define FUTEX_ATTACH		126
#define FUTEX_DETACH		125
#define FUTEX_ATTACHED		0x40000000
#endif
#ifndef PR_FUTEX_HASH
#define PR_FUTEX_HASH		78
#define PR_FUTEX_HASH_SET_SLOTS	1
#define PR_FUTEX_HASH_GET_SLOTS	2
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv		449
#endif
#ifndef __NR_futex_wake
#define __NR_futex_wake		454
#define __NR_futex_wait		455
#define __NR_futex_requeue	456
#endif
#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2		13
#endif
#ifndef FUTEX2_SIZE_MASK
#define FUTEX2_SIZE_MASK	0x03
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32		0x02
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE		FUTEX_PRIVATE_FLAG
#endif
/* Linux 6.16: a futex with a node word, {value, node}, aligned to the pair */
#ifndef FUTEX2_NUMA
#define FUTEX2_NUMA		0x04
#endif
#ifndef FUTEX2_MPOL
#define FUTEX2_MPOL		0x08
#endif
#ifndef FUTEX_NO_NODE
#define FUTEX_NO_NODE		(-1)
#endif

#endif /* FF_ABI_H */
