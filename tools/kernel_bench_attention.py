"""The attention sections of tools/kernel_bench.py (split from it to keep each file under 500
lines): causal SDPA by length and backend, the long sequences and context-parallel blocks, and
one-token decode attention against a GQA KV cache (SDPA and a per-query-head Triton kernel).
Each section takes (torch, timer, writer, quick) as kernel_bench.py's others do."""


def section_attention(torch, t, w, quick):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    heads, d = 32, 128
    seqs = (2048, 8192, 32768) if quick else (1024, 2048, 4096, 8192, 16384, 32768, 65536)
    for seq in seqs:
        batch = max(1, 32768 // seq)
        q = torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.bfloat16,
                        requires_grad=True)
        k = torch.randn_like(q, requires_grad=True)
        v = torch.randn_like(q, requires_grad=True)
        dout = torch.randn_like(q)
        # Causal: the lower triangle, 4·b·h·d·s²/2 FLOPs forward (QKᵀ and PV), 2.5× that for
        # forward + backward (FlashAttention-2's count: backward is 2.5× forward with its
        # recompute of QKᵀ); the full square's count is twice these.
        fwd_flop = 4.0 * batch * heads * d * seq * seq / 2
        chosen = (("default", None),) + (tuple(backends.items()) if seq <= 16384 else ())
        for name, be in chosen:
            try:
                def fwd():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True)

                def fwd_bwd():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    return torch.autograd.grad(o, (q, k, v), dout)
                if be is None:
                    s_f = t(fwd, target_seconds=0.1)
                    s_fb = t(fwd_bwd, target_seconds=0.2)
                else:
                    with sdpa_kernel([be]):
                        s_f = t(fwd, target_seconds=0.1)
                        s_fb = t(fwd_bwd, target_seconds=0.2)
                w.row(seq, batch, heads, d, name, s_f, s_fb, fwd_flop / s_f / 1e12,
                      3.5 * fwd_flop / s_fb / 1e12)
            except Exception as e:  # noqa: BLE001
                w.note(f"{name} seq {seq} failed: {type(e).__name__}: {str(e)[:120]}")
        del q, k, v, dout


def section_attention_long(torch, t, w, quick):
    """Causal SDPA on one sequence of 32K-128K tokens (the lengths context parallelism splits),
    and the blocks a ring of cp ranks computes per call: a query chunk against a key/value chunk
    of the same length, causal on the diagonal and full off it."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    heads, d = 32, 128
    cases = [("causal", s, s, True) for s in ((32768,) if quick else (32768, 65536, 131072))]
    cases += [("block_full", 32768, 32768, False), ("block_causal", 32768, 32768, True)]
    for label, sq, skv, causal in cases:
        q = torch.randn(1, heads, sq, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(1, heads, skv, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn_like(k, requires_grad=True)
        dout = torch.randn_like(q)
        fwd_flop = 4.0 * heads * d * sq * skv * (0.5 if causal else 1.0)
        for name, be in backends.items():
            try:
                def fwd_bwd():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    return torch.autograd.grad(o, (q, k, v), dout)
                with sdpa_kernel([be]):
                    s_fb = t(fwd_bwd, target_seconds=0.2)
                w.row(label, sq, skv, name, s_fb, 3.5 * fwd_flop / s_fb / 1e12)
            except Exception as e:  # noqa: BLE001
                w.note(f"{name} {label} {sq}x{skv} failed: {type(e).__name__}: {str(e)[:120]}")
        del q, k, v, dout


def decode_kernel(triton, tl):
    @triton.jit
    def kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, group: tl.constexpr, hq: tl.constexpr,
               hkv: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr):
        # One program per (sequence, query head): it reads its KV head's whole cache, as the
        # masked multi-head attention decode kernels do (one thread block per query head).
        b = tl.program_id(0)
        h = tl.program_id(1)
        kvh = h // group
        d = tl.arange(0, D)
        q = tl.load(q_ptr + (b * hq + h) * D + d).to(tl.float32)
        base = (b * hkv + kvh).to(tl.int64) * seq_len * D  # past 2^31 elements at b 64
        m_i = tl.full([1], float("-inf"), tl.float32)
        l_i = tl.zeros([1], tl.float32)
        acc = tl.zeros([D], dtype=tl.float32)
        for start in range(0, seq_len, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            mask = rows < seq_len
            offs = base + rows[:, None] * D + d[None, :]
            kb = tl.load(k_ptr + offs, mask=mask[:, None], other=0.0).to(tl.float32)
            s = tl.sum(kb * q[None, :], axis=1) * 0.08838834764831845
            s = tl.where(mask, s, -float("inf"))
            m_new = tl.maximum(m_i, tl.max(s, axis=0))
            p = tl.exp(s - m_new)
            alpha = tl.exp(m_i - m_new)
            vb = tl.load(v_ptr + offs, mask=mask[:, None], other=0.0).to(tl.float32)
            acc = acc * alpha + tl.sum(p[:, None] * vb, axis=0)
            l_i = l_i * alpha + tl.sum(p, axis=0)
            m_i = m_new
        tl.store(o_ptr + (b * hq + h) * D + d, (acc / l_i).to(tl.bfloat16))
    return kernel


def section_decode_attn(torch, t, w, quick):
    import torch.nn.functional as F
    d = 128
    cases = []  # (label, hq, hkv)
    cases += [("gqa8_tp2", 32, 4), ("mha_same_bytes", 4, 4), ("mha_same_programs", 32, 32)]
    lens = (2048, 8192) if quick else (512, 2048, 4096, 8192, 16384)
    batches = (1, 16, 64) if quick else (1, 8, 32, 64)
    kernel = None
    try:
        import triton
        import triton.language as tl
        kernel = decode_kernel(triton, tl)
    except Exception as e:  # noqa: BLE001
        w.note(f"triton unavailable: {type(e).__name__}: {e}")
    for label, hq, hkv in cases:
        for seq in lens:
            for b in batches:
                kv_bytes = 2.0 * 2 * b * hkv * seq * d  # K and V, bf16
                if kv_bytes > 24e9:
                    continue
                k = torch.randn(b, hkv, seq, d, device="cuda", dtype=torch.bfloat16)
                v = torch.randn_like(k)
                q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
                if kernel is not None:
                    try:
                        o = torch.empty(b, hq, d, device="cuda", dtype=torch.bfloat16)
                        grid = (b, hq)
                        s = t(lambda: kernel[grid](q, k, v, o, seq, group=hq // hkv, hq=hq,
                                                   hkv=hkv, D=d, BLOCK=64))
                        w.row(label, "triton_per_head", b, hq, hkv, seq, s, kv_bytes,
                              kv_bytes / s)
                    except Exception as e:  # noqa: BLE001
                        w.note(f"triton {label} b{b} s{seq}: {type(e).__name__}: {str(e)[:160]}")
                        kernel = None
                try:
                    s = t(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=hq != hkv))
                    w.row(label, "sdpa_default", b, hq, hkv, seq, s, kv_bytes, kv_bytes / s)
                except Exception as e:  # noqa: BLE001
                    w.note(f"sdpa {label} b{b} s{seq}: {type(e).__name__}: {str(e)[:160]}")
                del k, v, q
