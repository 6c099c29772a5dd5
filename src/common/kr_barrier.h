/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory barriers named for what they order. On x86-64 stores to write-back
 * memory are not reordered with each other, so the CPU needs a fence only for
 * write-combining MMIO; the compiler barrier is what keeps C from reordering.
 */
#ifndef KR_BARRIER_H
#define KR_BARRIER_H

#if defined(__x86_64__) || defined(__i386__)
#define kr_compiler_barrier() __asm__ volatile("" ::: "memory")
/* WQE bytes in memory before the doorbell record that publishes them. */
#define kr_wmb_before_dbrec() kr_compiler_barrier()
/* Doorbell record in memory before the UAR write: the HCA may read it then. */
#define kr_wmb_before_doorbell() kr_compiler_barrier()
/* Drain the write-combining buffer so the UAR write leaves the CPU now. */
#define kr_flush_after_doorbell() __asm__ volatile("sfence" ::: "memory")
/* Earlier stores (the doorbell record) reach the device before a write to a
 * write-combining page (a BlueFlame register): rdma-core's mmio_wc_start. */
#define kr_wc_start() __asm__ volatile("sfence" ::: "memory")
/* CQE owner bit read before the rest of the CQE. */
#define kr_rmb_after_cqe_owner() kr_compiler_barrier()
#elif defined(__aarch64__)
#define kr_compiler_barrier() __asm__ volatile("" ::: "memory")
#define kr_wmb_before_dbrec() __asm__ volatile("dmb oshst" ::: "memory")
#define kr_wmb_before_doorbell() __asm__ volatile("dmb oshst" ::: "memory")
#define kr_flush_after_doorbell() __asm__ volatile("dsb st" ::: "memory")
#define kr_wc_start()		  __asm__ volatile("dsb st" ::: "memory")
#define kr_rmb_after_cqe_owner() __asm__ volatile("dmb oshld" ::: "memory")
#else
#define kr_compiler_barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define kr_wmb_before_dbrec() __atomic_thread_fence(__ATOMIC_RELEASE)
#define kr_wmb_before_doorbell() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define kr_flush_after_doorbell() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define kr_wc_start()		  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define kr_rmb_after_cqe_owner() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

#define kr_likely(x) __builtin_expect(!!(x), 1)
#define kr_unlikely(x) __builtin_expect(!!(x), 0)

#endif /* KR_BARRIER_H */
