/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PRM field layouts used by krcore: KR_PRM(struct, field, bit_offset, bit_width).
 *
 * The struct and field names are those of the mlx5 PRM as the kernel's
 * include/linux/mlx5/mlx5_ifc.h spells them (mlx5_ifc_<struct>_bits), so that
 * tests/devx/test_devx_prm_layout.c can check every line below against that
 * header. KR_PRM_SIZE(struct, bits) gives the mailbox/context size.
 *
 * KR_PRM_DOC(struct, field, bit_offset, bit_width, source) is a DEVX field the
 * 6.1 kernel header lacks (it lands in a reserved range there); the test checks
 * it against the offset written down in the test with the same source and that
 * it overlaps no field of the kernel's layout.
 *
 * KR_PRM_AS(struct, field, bit_offset, bit_width, kernel_struct) is a generic
 * header field, checked against kernel_struct's field of the same name.
 *
 * This file is included several times with different definitions of the
 * macros; it has no include guard on purpose.
 */

/* Generic command header: the same bits open every *_in and *_out mailbox. */
KR_PRM_SIZE(mbox_in, 0x80)
KR_PRM_AS(mbox_in, opcode, 0x0, 0x10, alloc_pd_in)
KR_PRM_AS(mbox_in, uid, 0x10, 0x10, alloc_pd_in)
KR_PRM_AS(mbox_in, op_mod, 0x30, 0x10, alloc_pd_in)
KR_PRM_SIZE(mbox_out, 0x80)
KR_PRM_AS(mbox_out, status, 0x0, 0x8, alloc_pd_out)
KR_PRM_AS(mbox_out, syndrome, 0x20, 0x20, alloc_pd_out)

/* query_hca_cap_in */
KR_PRM_SIZE(query_hca_cap_in, 0x80)
KR_PRM(query_hca_cap_in, opcode, 0x0, 0x10)
KR_PRM(query_hca_cap_in, op_mod, 0x30, 0x10)

/* query_hca_cap_out */
KR_PRM_SIZE(query_hca_cap_out, 0x8080)
KR_PRM(query_hca_cap_out, status, 0x0, 0x8)
KR_PRM(query_hca_cap_out, syndrome, 0x20, 0x20)
KR_PRM(query_hca_cap_out, capability, 0x80, 0x8000)

/* cmd_hca_cap */
KR_PRM_SIZE(cmd_hca_cap, 0x800)
KR_PRM(cmd_hca_cap, log_max_srq_sz, 0x80, 0x8)
KR_PRM(cmd_hca_cap, log_max_qp_sz, 0x88, 0x8)
KR_PRM(cmd_hca_cap, log_max_qp, 0x9b, 0x5)
KR_PRM(cmd_hca_cap, log_max_srq, 0xab, 0x5)
KR_PRM(cmd_hca_cap, log_max_cq_sz, 0xc8, 0x8)
KR_PRM(cmd_hca_cap, log_max_cq, 0xdb, 0x5)
KR_PRM(cmd_hca_cap, log_max_mkey, 0xea, 0x6)
KR_PRM(cmd_hca_cap, log_max_ra_req_dc, 0x12a, 0x6)
KR_PRM(cmd_hca_cap, log_max_ra_res_dc, 0x13a, 0x6)
KR_PRM(cmd_hca_cap, log_max_ra_req_qp, 0x14a, 0x6)
KR_PRM(cmd_hca_cap, log_max_ra_res_qp, 0x15a, 0x6)
KR_PRM(cmd_hca_cap, gid_table_size, 0x170, 0x10)
KR_PRM(cmd_hca_cap, pkey_table_size, 0x190, 0x10)
KR_PRM(cmd_hca_cap, port_type, 0x1b6, 0x2)
KR_PRM(cmd_hca_cap, num_ports, 0x1b8, 0x8)
KR_PRM(cmd_hca_cap, log_max_msg, 0x1c3, 0x5)
KR_PRM(cmd_hca_cap, cqe_version, 0x1fc, 0x4)
KR_PRM(cmd_hca_cap, dct, 0x21a, 0x1)
KR_PRM(cmd_hca_cap, roce, 0x21d, 0x1)
KR_PRM(cmd_hca_cap, atomic, 0x21e, 0x1)
KR_PRM(cmd_hca_cap, rc, 0x23f, 0x1)
KR_PRM(cmd_hca_cap, uar_sz, 0x24a, 0x6)
KR_PRM(cmd_hca_cap, bf, 0x260, 0x1)
KR_PRM(cmd_hca_cap, log_bf_reg_size, 0x26b, 0x5)
KR_PRM(cmd_hca_cap, log_max_pd, 0x32b, 0x5)
KR_PRM(cmd_hca_cap, log_max_uctx, 0x463, 0x5)
KR_PRM(cmd_hca_cap, max_wqe_sz_sq, 0x290, 0x10)
KR_PRM(cmd_hca_cap, max_wqe_sz_rq, 0x2b0, 0x10)
KR_PRM(cmd_hca_cap, max_wqe_sz_sq_dc, 0x2d0, 0x10)
KR_PRM(cmd_hca_cap, max_qp_mcg, 0x2e7, 0x19)
KR_PRM(cmd_hca_cap, log_pg_sz, 0x258, 0x8)
KR_PRM(cmd_hca_cap, vhca_id, 0x30, 0x10)
KR_PRM(cmd_hca_cap, basic_cyclic_rcv_wqe, 0x380, 0x1)
KR_PRM(cmd_hca_cap, sq_ts_format, 0x440, 0x2)

/* alloc_pd_in */
KR_PRM_SIZE(alloc_pd_in, 0x80)
KR_PRM(alloc_pd_in, opcode, 0x0, 0x10)
KR_PRM(alloc_pd_in, uid, 0x10, 0x10)
KR_PRM(alloc_pd_in, op_mod, 0x30, 0x10)

/* alloc_pd_out */
KR_PRM_SIZE(alloc_pd_out, 0x80)
KR_PRM(alloc_pd_out, status, 0x0, 0x8)
KR_PRM(alloc_pd_out, syndrome, 0x20, 0x20)
KR_PRM(alloc_pd_out, pd, 0x48, 0x18)

/* dealloc_pd_in */
KR_PRM_SIZE(dealloc_pd_in, 0x80)
KR_PRM(dealloc_pd_in, opcode, 0x0, 0x10)
KR_PRM(dealloc_pd_in, pd, 0x48, 0x18)

/* create_cq_in */
KR_PRM_SIZE(create_cq_in, 0x880)
KR_PRM(create_cq_in, opcode, 0x0, 0x10)
KR_PRM(create_cq_in, uid, 0x10, 0x10)
KR_PRM(create_cq_in, op_mod, 0x30, 0x10)
KR_PRM(create_cq_in, cq_context, 0x80, 0x200)
KR_PRM(create_cq_in, cq_umem_valid, 0x2e0, 0x1)

/* create_cq_out */
KR_PRM_SIZE(create_cq_out, 0x80)
KR_PRM(create_cq_out, status, 0x0, 0x8)
KR_PRM(create_cq_out, syndrome, 0x20, 0x20)
KR_PRM(create_cq_out, cqn, 0x48, 0x18)

/* destroy_cq_in */
KR_PRM_SIZE(destroy_cq_in, 0x80)
KR_PRM(destroy_cq_in, opcode, 0x0, 0x10)
KR_PRM(destroy_cq_in, cqn, 0x48, 0x18)

/* query_cq_in */
KR_PRM_SIZE(query_cq_in, 0x80)
KR_PRM(query_cq_in, opcode, 0x0, 0x10)
KR_PRM(query_cq_in, op_mod, 0x30, 0x10)
KR_PRM(query_cq_in, cqn, 0x48, 0x18)

/* query_cq_out */
KR_PRM_SIZE(query_cq_out, 0x880)
KR_PRM(query_cq_out, status, 0x0, 0x8)
KR_PRM(query_cq_out, syndrome, 0x20, 0x20)
KR_PRM(query_cq_out, cq_context, 0x80, 0x200)

/* cqc */
KR_PRM_SIZE(cqc, 0x200)
KR_PRM(cqc, status, 0x0, 0x4)
KR_PRM(cqc, dbr_umem_valid, 0x6, 0x1)
KR_PRM(cqc, cqe_sz, 0x8, 0x3)
KR_PRM(cqc, cc, 0xb, 0x1)
KR_PRM(cqc, oi, 0xe, 0x1)
KR_PRM(cqc, log_cq_size, 0x63, 0x5)
KR_PRM(cqc, uar_page, 0x68, 0x18)
KR_PRM(cqc, c_eqn_or_apu_element, 0xa0, 0x20)
KR_PRM(cqc, log_page_size, 0xc3, 0x5)
KR_PRM(cqc, page_offset, 0x54, 0x6)
KR_PRM(cqc, consumer_counter, 0x148, 0x18)
KR_PRM(cqc, producer_counter, 0x168, 0x18)
KR_PRM(cqc, dbr_addr, 0x1c0, 0x40)

/* create_qp_in */
KR_PRM_SIZE(create_qp_in, 0x880)
KR_PRM(create_qp_in, opcode, 0x0, 0x10)
KR_PRM(create_qp_in, uid, 0x10, 0x10)
KR_PRM(create_qp_in, op_mod, 0x30, 0x10)
KR_PRM(create_qp_in, opt_param_mask, 0x80, 0x20)
KR_PRM(create_qp_in, qpc, 0xc0, 0x740)
KR_PRM(create_qp_in, wq_umem_valid, 0x860, 0x1)

/* create_qp_out */
KR_PRM_SIZE(create_qp_out, 0x80)
KR_PRM(create_qp_out, status, 0x0, 0x8)
KR_PRM(create_qp_out, syndrome, 0x20, 0x20)
KR_PRM(create_qp_out, qpn, 0x48, 0x18)

/* destroy_qp_in */
KR_PRM_SIZE(destroy_qp_in, 0x80)
KR_PRM(destroy_qp_in, opcode, 0x0, 0x10)
KR_PRM(destroy_qp_in, qpn, 0x48, 0x18)

/* qpc */
KR_PRM_SIZE(qpc, 0x740)
KR_PRM(qpc, state, 0x0, 0x4)
KR_PRM(qpc, st, 0x8, 0x8)
KR_PRM(qpc, pm_state, 0x13, 0x2)
KR_PRM(qpc, pd, 0x28, 0x18)
KR_PRM(qpc, mtu, 0x40, 0x3)
KR_PRM(qpc, log_msg_max, 0x43, 0x5)
KR_PRM(qpc, log_rq_size, 0x49, 0x4)
KR_PRM(qpc, log_rq_stride, 0x4d, 0x3)
KR_PRM(qpc, no_sq, 0x50, 0x1)
KR_PRM(qpc, log_sq_size, 0x51, 0x4)
KR_PRM(qpc, ts_format, 0x58, 0x2)
KR_PRM(qpc, rlky, 0x5b, 0x1)
KR_PRM(qpc, uar_page, 0x68, 0x18)
KR_PRM(qpc, user_index, 0x88, 0x18)
KR_PRM(qpc, log_page_size, 0xa3, 0x5)
KR_PRM(qpc, remote_qpn, 0xa8, 0x18)
KR_PRM(qpc, primary_address_path, 0xc0, 0x160)
KR_PRM(qpc, log_ack_req_freq, 0x380, 0x4)
KR_PRM(qpc, log_sra_max, 0x388, 0x3)
KR_PRM(qpc, retry_count, 0x38d, 0x3)
KR_PRM(qpc, rnr_retry, 0x390, 0x3)
KR_PRM(qpc, next_send_psn, 0x3c8, 0x18)
KR_PRM(qpc, cqn_snd, 0x3e8, 0x18)
KR_PRM(qpc, last_acked_psn, 0x448, 0x18)
KR_PRM(qpc, log_rra_max, 0x488, 0x3)
KR_PRM(qpc, atomic_mode, 0x48c, 0x4)
KR_PRM(qpc, rre, 0x490, 0x1)
KR_PRM(qpc, rwe, 0x491, 0x1)
KR_PRM(qpc, rae, 0x492, 0x1)
KR_PRM(qpc, page_offset, 0x494, 0x6)
KR_PRM(qpc, min_rnr_nak, 0x4a3, 0x5)
KR_PRM(qpc, next_rcv_psn, 0x4a8, 0x18)
KR_PRM(qpc, cqn_rcv, 0x4e8, 0x18)
KR_PRM(qpc, dbr_addr, 0x500, 0x40)
KR_PRM(qpc, rq_type, 0x565, 0x3)
KR_PRM(qpc, srqn_rmpn_xrqn, 0x568, 0x18)
KR_PRM(qpc, dbr_umem_valid, 0x683, 0x1)
KR_PRM(qpc, hw_sq_wqebb_counter, 0x5a0, 0x10)
KR_PRM(qpc, sw_sq_wqebb_counter, 0x5b0, 0x10)
KR_PRM(qpc, hw_rq_counter, 0x5c0, 0x20)
KR_PRM(qpc, sw_rq_counter, 0x5e0, 0x20)
KR_PRM(qpc, dc_access_key, 0x640, 0x40)

/* ads */
KR_PRM_SIZE(ads, 0x160)
KR_PRM(ads, fl, 0x0, 0x1)
KR_PRM(ads, pkey_index, 0x10, 0x10)
KR_PRM(ads, grh, 0x28, 0x1)
KR_PRM(ads, mlid, 0x29, 0x7)
KR_PRM(ads, rlid, 0x30, 0x10)
KR_PRM(ads, ack_timeout, 0x40, 0x5)
KR_PRM(ads, src_addr_index, 0x48, 0x8)
KR_PRM(ads, stat_rate, 0x54, 0x4)
KR_PRM(ads, hop_limit, 0x58, 0x8)
KR_PRM(ads, tclass, 0x64, 0x8)
KR_PRM(ads, flow_label, 0x6c, 0x14)
KR_PRM(ads, udp_sport, 0x110, 0x10)
KR_PRM(ads, sl, 0x124, 0x4)
KR_PRM(ads, eth_prio, 0x121, 0x3)
KR_PRM(ads, dscp, 0x10a, 0x6)
KR_PRM(ads, vhca_port_num, 0x128, 0x8)
KR_PRM(ads, rmac_47_32, 0x130, 0x10)
KR_PRM(ads, rmac_31_0, 0x140, 0x20)
KR_PRM(ads, rgid_rip, 0x80, 0x80)

/* rst2init_qp_in */
KR_PRM_SIZE(rst2init_qp_in, 0x880)
KR_PRM(rst2init_qp_in, opcode, 0x0, 0x10)
KR_PRM(rst2init_qp_in, uid, 0x10, 0x10)
KR_PRM(rst2init_qp_in, op_mod, 0x30, 0x10)
KR_PRM(rst2init_qp_in, qpn, 0x48, 0x18)
KR_PRM(rst2init_qp_in, opt_param_mask, 0x80, 0x20)
KR_PRM(rst2init_qp_in, qpc, 0xc0, 0x740)

/* rst2init_qp_out */
KR_PRM_SIZE(rst2init_qp_out, 0x80)
KR_PRM(rst2init_qp_out, status, 0x0, 0x8)
KR_PRM(rst2init_qp_out, syndrome, 0x20, 0x20)

/* init2rtr_qp_in */
KR_PRM_SIZE(init2rtr_qp_in, 0x880)
KR_PRM(init2rtr_qp_in, opcode, 0x0, 0x10)
KR_PRM(init2rtr_qp_in, uid, 0x10, 0x10)
KR_PRM(init2rtr_qp_in, op_mod, 0x30, 0x10)
KR_PRM(init2rtr_qp_in, qpn, 0x48, 0x18)
KR_PRM(init2rtr_qp_in, opt_param_mask, 0x80, 0x20)
KR_PRM(init2rtr_qp_in, qpc, 0xc0, 0x740)

/* init2rtr_qp_out */
KR_PRM_SIZE(init2rtr_qp_out, 0x80)
KR_PRM(init2rtr_qp_out, status, 0x0, 0x8)
KR_PRM(init2rtr_qp_out, syndrome, 0x20, 0x20)

/* rtr2rts_qp_in */
KR_PRM_SIZE(rtr2rts_qp_in, 0x880)
KR_PRM(rtr2rts_qp_in, opcode, 0x0, 0x10)
KR_PRM(rtr2rts_qp_in, uid, 0x10, 0x10)
KR_PRM(rtr2rts_qp_in, op_mod, 0x30, 0x10)
KR_PRM(rtr2rts_qp_in, qpn, 0x48, 0x18)
KR_PRM(rtr2rts_qp_in, opt_param_mask, 0x80, 0x20)
KR_PRM(rtr2rts_qp_in, qpc, 0xc0, 0x740)

/* rtr2rts_qp_out */
KR_PRM_SIZE(rtr2rts_qp_out, 0x80)
KR_PRM(rtr2rts_qp_out, status, 0x0, 0x8)
KR_PRM(rtr2rts_qp_out, syndrome, 0x20, 0x20)

/* qp_2err_in */
KR_PRM_SIZE(qp_2err_in, 0x80)
KR_PRM(qp_2err_in, opcode, 0x0, 0x10)
KR_PRM(qp_2err_in, uid, 0x10, 0x10)
KR_PRM(qp_2err_in, op_mod, 0x30, 0x10)
KR_PRM(qp_2err_in, qpn, 0x48, 0x18)

/* qp_2err_out */
KR_PRM_SIZE(qp_2err_out, 0x80)
KR_PRM(qp_2err_out, status, 0x0, 0x8)
KR_PRM(qp_2err_out, syndrome, 0x20, 0x20)

/* qp_2rst_in */
KR_PRM_SIZE(qp_2rst_in, 0x80)
KR_PRM(qp_2rst_in, opcode, 0x0, 0x10)
KR_PRM(qp_2rst_in, uid, 0x10, 0x10)
KR_PRM(qp_2rst_in, op_mod, 0x30, 0x10)
KR_PRM(qp_2rst_in, qpn, 0x48, 0x18)

/* qp_2rst_out */
KR_PRM_SIZE(qp_2rst_out, 0x80)
KR_PRM(qp_2rst_out, status, 0x0, 0x8)
KR_PRM(qp_2rst_out, syndrome, 0x20, 0x20)

/* query_qp_in */
KR_PRM_SIZE(query_qp_in, 0x80)
KR_PRM(query_qp_in, opcode, 0x0, 0x10)
KR_PRM(query_qp_in, op_mod, 0x30, 0x10)
KR_PRM(query_qp_in, qpn, 0x48, 0x18)

/* query_qp_out */
KR_PRM_SIZE(query_qp_out, 0x880)
KR_PRM(query_qp_out, status, 0x0, 0x8)
KR_PRM(query_qp_out, syndrome, 0x20, 0x20)
KR_PRM(query_qp_out, opt_param_mask, 0x80, 0x20)
KR_PRM(query_qp_out, qpc, 0xc0, 0x740)

/* create_rmp_in */
KR_PRM_SIZE(create_rmp_in, 0x880)
KR_PRM(create_rmp_in, opcode, 0x0, 0x10)
KR_PRM(create_rmp_in, uid, 0x10, 0x10)
KR_PRM(create_rmp_in, op_mod, 0x30, 0x10)
KR_PRM(create_rmp_in, ctx, 0x100, 0x780)

/* create_rmp_out */
KR_PRM_SIZE(create_rmp_out, 0x80)
KR_PRM(create_rmp_out, status, 0x0, 0x8)
KR_PRM(create_rmp_out, syndrome, 0x20, 0x20)
KR_PRM(create_rmp_out, rmpn, 0x48, 0x18)

/* destroy_rmp_in */
KR_PRM_SIZE(destroy_rmp_in, 0x80)
KR_PRM(destroy_rmp_in, opcode, 0x0, 0x10)
KR_PRM(destroy_rmp_in, rmpn, 0x48, 0x18)

/* rmpc */
KR_PRM_SIZE(rmpc, 0x780)
KR_PRM(rmpc, state, 0x8, 0x4)
KR_PRM(rmpc, basic_cyclic_rcv_wqe, 0x20, 0x1)
KR_PRM(rmpc, wq, 0x180, 0x600)

/* wq */
KR_PRM_SIZE(wq, 0x600)
KR_PRM(wq, wq_type, 0x0, 0x4)
KR_PRM(wq, wq_signature, 0x4, 0x1)
KR_PRM(wq, page_offset, 0x2b, 0x5)
KR_PRM(wq, lwm, 0x30, 0x10)
KR_PRM(wq, pd, 0x48, 0x18)
KR_PRM(wq, uar_page, 0x68, 0x18)
KR_PRM(wq, dbr_addr, 0x80, 0x40)
KR_PRM(wq, hw_counter, 0xc0, 0x20)
KR_PRM(wq, sw_counter, 0xe0, 0x20)
KR_PRM(wq, log_wq_stride, 0x10c, 0x4)
KR_PRM(wq, log_wq_pg_sz, 0x113, 0x5)
KR_PRM(wq, log_wq_sz, 0x11b, 0x5)
KR_PRM(wq, dbr_umem_valid, 0x120, 0x1)
KR_PRM(wq, wq_umem_valid, 0x121, 0x1)

/* create_dct_in */
KR_PRM_SIZE(create_dct_in, 0x400)
KR_PRM(create_dct_in, opcode, 0x0, 0x10)
KR_PRM(create_dct_in, uid, 0x10, 0x10)
KR_PRM(create_dct_in, op_mod, 0x30, 0x10)
KR_PRM(create_dct_in, dct_context_entry, 0x80, 0x200)

/* create_dct_out */
KR_PRM_SIZE(create_dct_out, 0x80)
KR_PRM(create_dct_out, status, 0x0, 0x8)
KR_PRM(create_dct_out, syndrome, 0x20, 0x20)
KR_PRM(create_dct_out, dctn, 0x48, 0x18)

/* destroy_dct_in */
KR_PRM_SIZE(destroy_dct_in, 0x80)
KR_PRM(destroy_dct_in, opcode, 0x0, 0x10)
KR_PRM(destroy_dct_in, dctn, 0x48, 0x18)

/* drain_dct_in */
KR_PRM_SIZE(drain_dct_in, 0x80)
KR_PRM(drain_dct_in, opcode, 0x0, 0x10)
KR_PRM(drain_dct_in, uid, 0x10, 0x10)
KR_PRM(drain_dct_in, op_mod, 0x30, 0x10)
KR_PRM(drain_dct_in, dctn, 0x48, 0x18)

/* drain_dct_out */
KR_PRM_SIZE(drain_dct_out, 0x80)
KR_PRM(drain_dct_out, status, 0x0, 0x8)
KR_PRM(drain_dct_out, syndrome, 0x20, 0x20)

/* query_dct_in */
KR_PRM_SIZE(query_dct_in, 0x80)
KR_PRM(query_dct_in, opcode, 0x0, 0x10)
KR_PRM(query_dct_in, dctn, 0x48, 0x18)

/* query_dct_out */
KR_PRM_SIZE(query_dct_out, 0x400)
KR_PRM(query_dct_out, status, 0x0, 0x8)
KR_PRM(query_dct_out, syndrome, 0x20, 0x20)
KR_PRM(query_dct_out, dct_context_entry, 0x80, 0x200)

/* roce_cap: the RoCE capability page */
KR_PRM_SIZE(roce_cap, 0x800)
KR_PRM(roce_cap, qp_ts_format, 0x1e, 0x2)
KR_PRM(roce_cap, roce_address_table_size, 0xf0, 0x10)

/* dctc */
KR_PRM_SIZE(dctc, 0x200)
KR_PRM(dctc, state, 0x4, 0x4)
KR_PRM(dctc, user_index, 0x28, 0x18)
KR_PRM(dctc, cqn, 0x48, 0x18)
KR_PRM(dctc, atomic_mode, 0x68, 0x4)
KR_PRM(dctc, rre, 0x6c, 0x1)
KR_PRM(dctc, rwe, 0x6d, 0x1)
KR_PRM(dctc, rae, 0x6e, 0x1)
KR_PRM(dctc, min_rnr_nak, 0x93, 0x5)
KR_PRM(dctc, srqn_xrqn, 0xa8, 0x18)
KR_PRM(dctc, pd, 0xc8, 0x18)
KR_PRM(dctc, tclass, 0xe0, 0x8)
KR_PRM(dctc, flow_label, 0xec, 0x14)
KR_PRM(dctc, dc_access_key, 0x100, 0x40)
KR_PRM(dctc, mtu, 0x145, 0x3)
KR_PRM(dctc, port, 0x148, 0x8)
KR_PRM(dctc, pkey_index, 0x150, 0x10)
KR_PRM(dctc, my_addr_index, 0x168, 0x8)
KR_PRM(dctc, hop_limit, 0x178, 0x8)
KR_PRM(dctc, eth_prio, 0x1b5, 0x3)
KR_PRM(dctc, dscp, 0x1ba, 0x6)
KR_PRM(dctc, dc_access_key_violation_count, 0x180, 0x20)

/* create_mkey_in */
KR_PRM_SIZE(create_mkey_in, 0x880)
KR_PRM(create_mkey_in, opcode, 0x0, 0x10)
KR_PRM(create_mkey_in, uid, 0x10, 0x10)
KR_PRM(create_mkey_in, op_mod, 0x30, 0x10)
KR_PRM(create_mkey_in, pg_access, 0x60, 0x1)
KR_PRM(create_mkey_in, mkey_umem_valid, 0x61, 0x1)
KR_PRM(create_mkey_in, memory_key_mkey_entry, 0x80, 0x200)
KR_PRM(create_mkey_in, translations_octword_actual_size, 0x300, 0x20)

/* create_mkey_out */
KR_PRM_SIZE(create_mkey_out, 0x80)
KR_PRM(create_mkey_out, status, 0x0, 0x8)
KR_PRM(create_mkey_out, syndrome, 0x20, 0x20)
KR_PRM(create_mkey_out, mkey_index, 0x48, 0x18)

/* destroy_mkey_in */
KR_PRM_SIZE(destroy_mkey_in, 0x80)
KR_PRM(destroy_mkey_in, opcode, 0x0, 0x10)
KR_PRM(destroy_mkey_in, mkey_index, 0x48, 0x18)

/* mkc */
KR_PRM_SIZE(mkc, 0x200)
KR_PRM(mkc, free, 0x1, 0x1)
KR_PRM(mkc, access_mode_4_2, 0x3, 0x3)
KR_PRM(mkc, umr_en, 0x10, 0x1)
KR_PRM(mkc, a, 0x11, 0x1)
KR_PRM(mkc, rw, 0x12, 0x1)
KR_PRM(mkc, rr, 0x13, 0x1)
KR_PRM(mkc, lw, 0x14, 0x1)
KR_PRM(mkc, lr, 0x15, 0x1)
KR_PRM(mkc, access_mode_1_0, 0x16, 0x2)
KR_PRM(mkc, qpn, 0x20, 0x18)
KR_PRM(mkc, mkey_7_0, 0x38, 0x8)
KR_PRM(mkc, length64, 0x60, 0x1)
KR_PRM(mkc, pd, 0x68, 0x18)
KR_PRM(mkc, start_addr, 0x80, 0x40)
KR_PRM(mkc, len, 0xc0, 0x40)
KR_PRM(mkc, translations_octword_size, 0x1a0, 0x20)
KR_PRM(mkc, log_page_size, 0x1db, 0x5)

/* DEVX umem fields absent from the 6.1 kernel header. */
KR_PRM_DOC(create_qp_in, wq_umem_offset, 0x800, 0x40,
	   "rdma-core tests/mlx5_prm_structs.py CreateQpIn")
KR_PRM_DOC(create_qp_in, wq_umem_id, 0x840, 0x20,
	   "rdma-core providers/mlx5/mlx5_ifc.h create_qp_in")
KR_PRM_DOC(qpc, dbr_umem_id, 0x720, 0x20, "rdma-core providers/mlx5/mlx5_ifc.h qpc")
KR_PRM_DOC(create_cq_in, cq_umem_offset, 0x280, 0x40,
	   "rdma-core tests/mlx5_prm_structs.py CreateCqIn")
KR_PRM_DOC(create_cq_in, cq_umem_id, 0x2c0, 0x20, "rdma-core tests/mlx5_prm_structs.py CreateCqIn")
KR_PRM_DOC(cqc, dbr_umem_id, 0x20, 0x20, "rdma-core tests/mlx5_prm_structs.py SwCqc")
KR_PRM_DOC(create_mkey_in, mkey_umem_id, 0x320, 0x20,
	   "rdma-core tests/mlx5_prm_structs.py CreateMkeyIn")
KR_PRM_DOC(create_mkey_in, mkey_umem_offset, 0x340, 0x40,
	   "rdma-core tests/mlx5_prm_structs.py CreateMkeyIn")
KR_PRM_DOC(wq, dbr_umem_id, 0x140, 0x20, "UCX src/uct/ib/mlx5/dv/ib_mlx5_ifc.h uct_ib_mlx5_wq_bits")
KR_PRM_DOC(wq, wq_umem_id, 0x160, 0x20, "UCX src/uct/ib/mlx5/dv/ib_mlx5_ifc.h uct_ib_mlx5_wq_bits")

/* query_rmp_in */
KR_PRM_SIZE(query_rmp_in, 0x80)
KR_PRM(query_rmp_in, opcode, 0x0, 0x10)
KR_PRM(query_rmp_in, op_mod, 0x30, 0x10)
KR_PRM(query_rmp_in, rmpn, 0x48, 0x18)

/* query_rmp_out */
KR_PRM_SIZE(query_rmp_out, 0x880)
KR_PRM(query_rmp_out, status, 0x0, 0x8)
KR_PRM(query_rmp_out, syndrome, 0x20, 0x20)
KR_PRM(query_rmp_out, rmp_context, 0x100, 0x780)
