"""Each logits processor of transformers' generate(), alone, on the CPU.

What a processor allocates above its input scores, counted by
memhook/memhook.c (preloaded): the peak during the call and what is still
alive after it (its output), for float32 scores [8, 1024] and 24 ids of
sequences so far, torch.set_num_threads(1), the second of two calls.
vram-opt's nn.next_token models these allocations in transformers'
order (lib/Dialect/NN/NNOpsStep.cpp, getNextTokenPeak);
test/Import/HuggingFace/generate-sampling.test cites these figures.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/processors.py

writes results/processors-torch-<torch>-transformers-<transformers>-cpu.json.
"""
import datetime
import json
import pathlib
import platform

import memhook_preload

HERE = pathlib.Path(__file__).resolve().parent
BATCH, VOCAB, LENGTH = 8, 1024, 24


def main():
    memhook_preload.reexec()
    import torch
    import transformers
    from transformers.generation import logits_process as lp
    torch.set_num_threads(1)
    hook = memhook_preload.counter()
    torch.manual_seed(0)
    scores = torch.randn(BATCH, VOCAB)
    ids = torch.randint(0, VOCAB, (BATCH, LENGTH))

    def measure(call):
        for _ in range(2):
            hook.vram_reset_peak()
            base = hook.vram_live()
            out = call()
            peak, after = hook.vram_peak() - base, hook.vram_live() - base
            del out
        return {"peak_above_input": peak, "alive_after": after}

    rows = {
        "temperature_0.7": measure(lambda: lp.TemperatureLogitsWarper(0.7)(ids, scores)),
        "top_k_50": measure(lambda: lp.TopKLogitsWarper(50)(ids, scores)),
        "top_p_0.9": measure(lambda: lp.TopPLogitsWarper(0.9)(ids, scores)),
        "min_p_0.1": measure(lambda: lp.MinPLogitsWarper(0.1)(ids, scores)),
        "repetition_penalty_1.2": measure(
            lambda: lp.RepetitionPenaltyLogitsProcessor(1.2)(ids, scores)),
        "softmax_multinomial": measure(
            lambda: torch.multinomial(torch.softmax(scores, -1), 1)),
        "argmax": measure(lambda: torch.argmax(scores, -1)),
    }
    for name, row in rows.items():
        print(name, row)
    out = {"torch": torch.__version__, "transformers": transformers.__version__,
           "date": datetime.date.today().isoformat(),
           "machine": "%s, %s" % (platform.machine(), platform.platform()),
           "scores": [BATCH, VOCAB], "ids": [BATCH, LENGTH], "rows": rows}
    name = "processors-torch-%s-transformers-%s-cpu.json" % (
        torch.__version__.split("+")[0], transformers.__version__)
    (HERE / "results" / name).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
