/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The futex ABI the guest programs use, for uapi headers older than the
 * series (FUTEX_PREALLOC_HASH, PR_FUTEX_HASH) or than Linux 5.16/6.7
 * (futex_waitv, futex2 flags).  Include after <linux/futex.h> and
 * <sys/syscall.h>.
 */
#ifndef FF_ABI_H
#define FF_ABI_H

#ifndef FUTEX_PREALLOC_HASH
#define FUTEX_PREALLOC_HASH	14
#endif
#ifndef PR_FUTEX_HASH
#define PR_FUTEX_HASH		78
#define PR_FUTEX_HASH_SET_SLOTS	1
#define PR_FUTEX_HASH_GET_SLOTS	2
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv		449
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32		0x02
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE		FUTEX_PRIVATE_FLAG
#endif

#endif /* FF_ABI_H */
