"""The torch.export archives of test/Inputs/pt2 (issue 22), weights stripped.

Each model is exported as a user would export it for training:

    ep = torch.export.export(model.train(), example_args, dynamic_shapes=...)
    torch.export.save(ep, "model.pt2")

and the archive is then rewritten without its tensor data (data/weights/*,
data/constants/* other than their configs, data/sample_inputs/*): vram-opt
needs only the graph and the tensor metadata. The batch dimension (and the
sequence of the language models) is exported as a torch.export.Dim, so
--batch and --seq bind it.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/export_pt2.py [NAME...]

The small models defined here (convnet, transformer) are also measured:
the bytes autograd saves for backward in their forward pass at the export
sizes (torch 2.15 on the CPU, as measure.py counts them), written to
results/pt2-torch-<torch>-cpu.json, the reference of
test/Import/TorchExport/small.test. The torchvision models' references are
measure.py's rows in results/torch-2.15-cpu.json.
"""
import datetime
import platform
import io
import json
import pathlib
import sys
import zipfile

import torch
import torchvision
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import measure  # noqa: E402  (saved bytes and the profiler's memory events)
from small_models import (ActNet, BiGruNoBiasNet, BiLstmNet, BiLstmProjNoBiasNet,  # noqa: E402
                          BiRnnReluNet, GruNet, LstmNet, LstmNoBiasNet, LstmProjNet,
                          NormActNet, ReduceNet, RnnNet, SplitNet, TinyAudioNet, TinyUNet)

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "test" / "Inputs" / "pt2"
SMALL = ROOT / "test" / "Inputs" / "hf" / "small"


def strip(src: bytes) -> bytes:
    """The archive without tensor payloads (configs and the graph kept), deflated."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(src)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            parts = info.filename.split("/")
            if "data" in parts:
                sub = parts[parts.index("data") + 1:]
                if sub and sub[0] in ("weights", "constants", "sample_inputs") and not sub[-1].endswith(".json"):
                    continue
            zout.writestr(info.filename, zin.read(info.filename))
    return out.getvalue()


def save(name, ep):
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    data = strip(buf.getvalue())
    (OUT / f"{name}.pt2").write_bytes(data)
    ops = sorted({n.target.__name__ if hasattr(n.target, "__name__") else str(n.target)
                  for n in ep.graph.nodes if n.op == "call_function"})
    print(f"{name}.pt2: {len(data)} bytes; ops: {' '.join(ops)}")


def vision(name, ctor, batch=2, size=224):
    torch.manual_seed(0)
    model = ctor(num_classes=102).train()
    x = torch.randn(batch, 3, size, size)
    b = torch.export.Dim("batch", min=1, max=4096)
    save(name, torch.export.export(model, (x,), dynamic_shapes=({0: b},)))


def causal_lm(name, config, batch=2, seq=64):
    """A transformers causal LM at a small config of test/Inputs/hf/small.
    Traced, transformers materializes the causal mask ([B, 1, T, T] bool,
    built from arange/cumsum/index) and passes it to sdpa, and repeats the
    KV heads itself; eager training passes no mask (is_causal). So the
    reference is the exported program trained as exported: the bytes
    autograd saves in ep.module()'s forward."""
    torch.manual_seed(0)
    cfg = AutoConfig.from_pretrained(SMALL / config)
    model = AutoModelForCausalLM.from_config(cfg).train()
    ids = torch.randint(0, cfg.vocab_size, (batch, seq))
    b = torch.export.Dim("batch", min=1, max=4096)
    s = torch.export.Dim("seq", min=2, max=cfg.max_position_embeddings)
    ep = torch.export.export(model, (), kwargs={"input_ids": ids, "use_cache": False},
                             dynamic_shapes={"input_ids": {0: b, 1: s}, "use_cache": None})
    save(name, ep)
    module = ep.module()  # the graph was traced in train mode
    row = {"id": name, "shape": list(ids.shape), "dtype": str(ids.dtype),
           "params": sum(p.numel() for p in model.parameters()),
           "saved_activation_bytes": saved_bytes(lambda x: module(input_ids=x, use_cache=False),
                                                 ids, list(module.parameters()) + list(module.buffers())),
           "what": "ep.module(): the exported program, trained as exported"}
    MEASURED[name] = row
    print(f"  {row}")


class UnsupportedNet(torch.nn.Module):
    """A convolution, a GroupNorm and torch.logcumsumexp: the fixture of an
    op without a converter (test/Import/TorchExport/errors.test,
    supported-ops.test)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.GroupNorm(2, 8)

    def forward(self, x):
        return torch.logcumsumexp(self.norm(self.conv(x)), 3).mean((2, 3))


def unsupported():
    torch.manual_seed(0)
    b = torch.export.Dim("batch", min=1, max=4096)
    save("unsupported", torch.export.export(UnsupportedNet().train(), (torch.randn(2, 3, 16, 16),),
                                            dynamic_shapes=({0: b},)))


class GatedNet(torch.nn.Module):
    """torch.where(y > 0, y, zeros) on a linear's output: aten.where.self on
    a tensor that requires grad (an op vram-opt converts only without
    autograd: test/Import/TorchExport/errors.test)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        return torch.where(y > 0, y, torch.zeros_like(y))


def where_grad():
    torch.manual_seed(0)
    b = torch.export.Dim("batch", min=1, max=4096)
    save("where_grad", torch.export.export(GatedNet().train(), (torch.randn(2, 8),),
                                           dynamic_shapes=({0: b},)))


def unet(name="unet", bilinear=False):
    torch.manual_seed(0)
    b = torch.export.Dim("batch", min=1, max=4096)
    model = TinyUNet(bilinear=bilinear).train()
    x = torch.randn(2, 3, 32, 32)
    small(name, model, x, {0: b})
    # A per-pixel loss over the [2, 2, 32, 32] output as vram-opt's mse_loss
    # against a target of the output's shape.
    target = torch.randn(2, 2, 32, 32)
    MEASURED[name]["cpu_sgd_step_peak_above_baseline"] = step_peak(
        model, x, lambda out: torch.nn.functional.mse_loss(out, target))
    print(f"  {MEASURED[name]}")


def bad():
    """Archives that must fail with one located error (test/Import/TorchExport/errors.test)."""
    src = (OUT / "resnet18.pt2").read_bytes()
    bad_dir = OUT / "bad"
    bad_dir.mkdir(exist_ok=True)

    def rewrite(name, edit):
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(src)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                data = edit(info.filename, zin.read(info.filename))
                if data is not None:
                    zout.writestr(info.filename, data)
        (bad_dir / name).write_bytes(out.getvalue())

    def model_json(edit_program):
        def edit(filename, data):
            if not filename.endswith("models/model.json"):
                return data
            program = json.loads(data)
            edit_program(program)
            return json.dumps(program).encode()
        return edit

    (bad_dir / "not-a-zip.pt2").write_bytes(b"def forward(x): return x\n")
    rewrite("no-format.pt2", lambda f, d: None if f.endswith("/archive_format") else d)
    rewrite("torchscript-format.pt2", lambda f, d: b"torchscript" if f.endswith("/archive_format") else d)
    rewrite("no-model.pt2", lambda f, d: None if "/models/" in f else d)
    rewrite("truncated-json.pt2", lambda f, d: d[: len(d) // 2] if f.endswith("models/model.json") else d)
    rewrite("schema-99.pt2", model_json(lambda p: p["schema_version"].update(major=99)))

    def loss_output(p):
        p["graph_module"]["signature"]["output_specs"][0] = {
            "loss_output": p["graph_module"]["signature"]["output_specs"][0]["user_output"]}
    rewrite("loss-output.pt2", model_json(loss_output))

    def wrong_shape(p):
        # The first conv's output recorded with 65 channels: the converter
        # makes 64.
        tv = p["graph_module"]["graph"]["tensor_values"]
        tv["conv2d"]["sizes"][1] = {"as_int": 65}
    rewrite("wrong-shape.pt2", model_json(wrong_shape))

    def unmodelled_argument(p):
        node = p["graph_module"]["graph"]["nodes"][0]
        node["inputs"].append({"name": "output_padding", "arg": {"as_ints": [1, 1]}, "kind": 1})
    rewrite("unmodelled-argument.pt2", model_json(unmodelled_argument))

    def undefined_tensor(p):
        node = p["graph_module"]["graph"]["nodes"][0]
        node["inputs"][0]["arg"] = {"as_tensor": {"name": "nowhere"}}
    rewrite("undefined-tensor.pt2", model_json(undefined_tensor))
    # A small Swin-like block (roll, zero pad, a parameter table indexed by
    # a buffer) whose nodes are then rewritten into forms the importer
    # refuses: roll without dims, a reflect pad, two index tensors.
    class ShapeOpsNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.table = torch.nn.Parameter(torch.randn(16, 8))
            self.register_buffer("index", torch.arange(16).flip(0))

        def forward(self, x):
            y = torch.roll(self.conv(x), (2, 2), (2, 3))
            y = torch.nn.functional.pad(y, (0, 0, 0, 0))
            return y.mean((2, 3)) + self.table[self.index].sum(0)

    torch.manual_seed(0)
    b = torch.export.Dim("batch", min=1, max=4096)
    buf = io.BytesIO()
    torch.export.save(torch.export.export(ShapeOpsNet().train(), (torch.randn(2, 3, 8, 8),),
                                          dynamic_shapes=({0: b},)), buf)
    src = strip(buf.getvalue())

    def edit_node(target, edit_inputs):
        def edit(p):
            for node in p["graph_module"]["graph"]["nodes"]:
                if node["target"] == target:
                    edit_inputs(node["inputs"])
                    return
            raise RuntimeError(target + " not in the program")
        return model_json(edit)

    def no_dims(inputs):
        for i in inputs:
            if i["name"] == "dims":
                i["arg"] = {"as_ints": []}
    rewrite("roll-no-dims.pt2", edit_node("torch.ops.aten.roll.default", no_dims))

    def reflect(inputs):
        inputs.append({"name": "mode", "arg": {"as_string": "reflect"}, "kind": 1})
    rewrite("pad-reflect.pt2", edit_node("torch.ops.aten.pad.default", reflect))

    def two_indices(inputs):
        for i in inputs:
            if i["name"] == "indices":
                i["arg"]["as_tensors"] = i["arg"]["as_tensors"] * 2
    rewrite("index-two.pt2", edit_node("torch.ops.aten.index.Tensor", two_indices))
    bad_recurrent()
    print("bad/: " + " ".join(sorted(f.name for f in bad_dir.iterdir())))


def rewrite_node_inputs(src_name, name, target, edit_inputs):
    """OUT/bad/NAME: OUT/SRC_NAME with edit_inputs(inputs) applied to every
    node calling `target`."""
    src = (OUT / src_name).read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(src)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("models/model.json"):
                program = json.loads(data)
                for node in program["graph_module"]["graph"]["nodes"]:
                    if node["target"] == target:
                        edit_inputs(node["inputs"])
                data = json.dumps(program).encode()
            zout.writestr(info, data)
    (OUT / "bad" / name).write_bytes(out.getvalue())


def bad_recurrent():
    """lstm.pt2's aten.lstm.input node with a weight missing, and with one
    initial state instead of h0 and c0."""
    def drop_weight(inputs):
        for i in inputs:
            if i["name"] == "params":
                i["arg"]["as_tensors"].pop()
    rewrite_node_inputs("lstm.pt2", "lstm-params.pt2", "torch.ops.aten.lstm.input", drop_weight)

    def one_state(inputs):
        for i in inputs:
            if i["name"] == "hx":
                i["arg"]["as_tensors"].pop()
    rewrite_node_inputs("lstm.pt2", "lstm-hx.pt2", "torch.ops.aten.lstm.input", one_state)


def bad_splits():
    """splits.pt2 with split sizes that do not cover the dimension, and a
    chunk into no pieces."""
    def short_sizes(inputs):
        for i in inputs:
            if i["name"] == "split_sizes":
                i["arg"]["as_ints"][-1] -= 1
    rewrite_node_inputs("splits.pt2", "split-sizes.pt2",
                        "torch.ops.aten.split_with_sizes.default", short_sizes)

    def no_chunks(inputs):
        for i in inputs:
            if i["name"] == "chunks":
                i["arg"]["as_int"] = 0
    rewrite_node_inputs("splits.pt2", "chunk-zero.pt2", "torch.ops.aten.chunk.default", no_chunks)


def bad_reductions():
    """reductions.pt2 with k larger than the dimension."""
    def too_many(inputs):
        for i in inputs:
            if i["name"] == "k":
                i["arg"]["as_int"] = 65
    rewrite_node_inputs("reductions.pt2", "topk-k.pt2", "torch.ops.aten.topk.default", too_many)


class TinyConvNet(torch.nn.Module):
    """Conv, BatchNorm, in-place ReLU, pooling, dropout, Linear."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(16)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, stride=2, padding=1, groups=2)
        self.drop = torch.nn.Dropout(0.2)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        y = torch.relu_(self.bn(self.conv(x)))
        y = torch.nn.functional.max_pool2d(y, 2)
        y = torch.nn.functional.silu(self.conv2(y))
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.fc(self.drop(y))


class PReluNet(torch.nn.Module):
    """PReLU between convolutions: one slope per channel, then one for all;
    the mean over the image, a Linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.act1 = torch.nn.PReLU(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.act2 = torch.nn.PReLU()
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = self.act2(self.conv2(self.act1(self.conv1(x))))
        return self.fc(x.mean((2, 3)))


class TinyTransformer(torch.nn.Module):
    """A causal decoder block over token ids: embedding, LayerNorm, fused
    QKV, causal sdpa, GELU MLP, untied head."""

    def __init__(self, vocab=512, d=64, heads=4):
        super().__init__()
        self.heads = heads
        self.embed = torch.nn.Embedding(vocab, d)
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        x = x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
        return self.head(x)


def saved_bytes(model, x, state=None):
    """measure.py's count: unique storages packed by saved_tensors_hooks in
    the forward pass, without parameters, buffers (or `state`) and the input."""
    return measure.saved_bytes(model, x, state)[0]


MEASURED = {}


def step_peak(model, x, loss_of):
    """The peak of the CPU profiler's [memory] events over one steady-state
    SGD step (after a warm-up step) above the live bytes after its
    zero_grad(set_to_none=True): measure.py's cpu_sgd_step_peak_above_baseline."""
    from torch.profiler import profile, ProfilerActivity
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def one():
        opt.zero_grad(set_to_none=True)
        loss_of(model(x)).backward()
        opt.step()

    one()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        one()
    return measure.peak_from_events(measure.memory_events(prof))[0]


def small(name, model, x, dims):
    torch.manual_seed(0)
    model = model.train()
    save(name, torch.export.export(model, (x,), dynamic_shapes=(dims,)))
    row = {"id": name, "shape": list(x.shape), "dtype": str(x.dtype),
           "params": sum(p.numel() for p in model.parameters()),
           "saved_activation_bytes": saved_bytes(model, x)}
    MEASURED[name] = row
    print(f"  {row}")


def convnet():
    torch.manual_seed(0)
    b = torch.export.Dim("batch", min=1, max=4096)
    small("convnet", TinyConvNet(), torch.randn(4, 3, 32, 32), {0: b})


def transformer():
    torch.manual_seed(0)
    b = torch.export.Dim("batch", min=1, max=4096)
    t = torch.export.Dim("seq", min=2, max=4096)
    small("transformer", TinyTransformer(), torch.randint(0, 512, (2, 64)), {0: b, 1: t})


def regression_net(name, model_class, shape, extra=None):
    """A small net trained on mse against a [2, 10] target: exported with a
    dynamic batch, its saved bytes and SGD step peak measured; `extra(model,
    x)` records more before the step."""
    torch.manual_seed(0)
    b = torch.export.Dim("batch", min=1, max=4096)
    model = model_class().train()
    x = torch.randn(*shape)
    small(name, model, x, {0: b})
    if extra:
        extra(model, x)
    target = torch.randn(2, 10)
    MEASURED[name]["cpu_sgd_step_peak_above_baseline"] = step_peak(
        model, x, lambda out: torch.nn.functional.mse_loss(out, target))
    print(f"  {MEASURED[name]}")


def audio():
    regression_net("audio", TinyAudioNet, (2, 1, 1600))


def splits():
    regression_net("splits", SplitNet, (2, 8, 16))


def reductions():
    regression_net("reductions", ReduceNet, (2, 8, 16))


def reductions_smallest():
    """ReduceNet with the 4 smallest (topk largest=False) and min(dim)."""
    regression_net("reductions_smallest", lambda: ReduceNet(smallest=True), (2, 8, 16))


def reductions_extremes():
    """ReduceNet with torch.amax over time, x.max() and torch.amin."""
    regression_net("reductions_extremes", lambda: ReduceNet(extremes=True), (2, 8, 16))


def recurrent(name, model_class, shape, batch_dim=0):
    """regression_net for an LSTM, GRU or RNN (torch.nn.LSTM runs oneDNN's
    LSTM on the CPU, GRU and RNN their cells one by one): exported with a dynamic batch (dimension `batch_dim` of the input),
    saved bytes and SGD step peak on mse against a [2, 10] target."""
    torch.manual_seed(0)
    b = torch.export.Dim("batch", min=2, max=4096)
    model = model_class().train()
    x = torch.randn(*shape)
    small(name, model, x, {batch_dim: b})
    target = torch.randn(2, 10)
    MEASURED[name]["cpu_sgd_step_peak_above_baseline"] = step_peak(
        model, x, lambda out: torch.nn.functional.mse_loss(out, target))
    print(f"  {MEASURED[name]}")


def onnx_dynamo(name, model_class, shape):
    """test/Inputs/onnx/NAME_dynamo.onnx: torch 2's default ONNX exporter
    (torch.onnx.export(dynamo=True), onnxscript's optimizer) on a recurrent
    module, as a user of torch 2 exports it: the weights' gate reordering
    and the zero initial states are folded into initializers (val_N), in
    ONNX's gate order. Static shapes (the example's); the weights stripped
    (tensors over 1 KiB as external data, deleted: the small constants, the
    index scalars and the initial states stay). test/Import/ONNX/recurrent.test compares it
    with the module's row of this file's table. Needs onnx and onnxscript
    in the truth environment."""
    import onnx
    torch.manual_seed(0)
    model = model_class().train()
    x = torch.randn(*shape)
    program = torch.onnx.export(model, (x,), dynamo=True)
    directory = ROOT / "test" / "Inputs" / "onnx"
    path = directory / f"{name}_dynamo.onnx"
    onnx.save_model(program.model_proto, path, save_as_external_data=True,
                    all_tensors_to_one_file=True, location=f"{name}_dynamo.onnx.data",
                    size_threshold=1024)
    (directory / f"{name}_dynamo.onnx.data").unlink()
    print(f"  wrote {path} (onnx {onnx.__version__})")


def activations():
    regression_net("activations", ActNet, (2, 3, 16, 16))


def norm_act():
    regression_net("norm_act", NormActNet, (2, 3, 16, 16))


def prelu():
    def autocast_bytes(model, x):
        # PReLU runs in bf16 under autocast (lower_precision_fp), keeping the
        # bf16 copy of its weight.
        with torch.autocast("cpu", dtype=torch.bfloat16):
            MEASURED["prelu"]["saved_activation_bytes_autocast_bf16"] = saved_bytes(model, x)
    regression_net("prelu", PReluNet, (2, 3, 16, 16), autocast_bytes)


def bert(name="bert", large=False):
    """transformers BertForSequenceClassification, ids [2, 64] (bert-large:
    [2, 128]), no attention mask given: at a small config (2 layers, hidden
    128, 4 heads, 3 labels), or bert-large-uncased's published sizes (24
    layers, hidden 1024, 16 heads, intermediate 4096, vocabulary 30,522, 512
    positions; 2 labels). The reference is the exported program trained as
    exported."""
    from transformers import BertConfig, BertForSequenceClassification
    torch.manual_seed(0)
    if large:
        cfg = BertConfig(vocab_size=30522, hidden_size=1024, num_hidden_layers=24,
                         num_attention_heads=16, intermediate_size=4096,
                         max_position_embeddings=512, num_labels=2)
        shape = (2, 128)
    else:
        cfg = BertConfig(vocab_size=1024, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=512, max_position_embeddings=128, num_labels=3)
        shape = (2, 64)
    model = BertForSequenceClassification(cfg).train()
    ids = torch.randint(0, cfg.vocab_size, shape)
    b = torch.export.Dim("batch", min=1, max=4096)
    s = torch.export.Dim("seq", min=2, max=cfg.max_position_embeddings)
    ep = torch.export.export(model, (), kwargs={"input_ids": ids},
                             dynamic_shapes={"input_ids": {0: b, 1: s}})
    save(name, ep)
    module = ep.module()
    row = {"id": name, "shape": list(ids.shape), "dtype": str(ids.dtype),
           "params": sum(p.numel() for p in model.parameters()),
           "saved_activation_bytes": saved_bytes(lambda x: module(input_ids=x), ids,
                                                 list(module.parameters()) + list(module.buffers())),
           "eager_saved_activation_bytes": saved_bytes(lambda x: model(input_ids=x).logits, ids,
                                                       list(model.parameters()) + list(model.buffers())),
           "what": "ep.module(): the exported program, trained as exported"}
    MEASURED[name] = row
    print(f"  {row}")


def t5():
    """transformers T5ForConditionalGeneration at a small config, ids [2, 64]
    and decoder ids [2, 64], use_cache=False: the exported program returns
    the logits and the encoder's last hidden state (training picks the
    logits: vram-opt --loss-output=0). The reference is the exported program
    trained as exported (its saved bytes without the parameters, buffers and
    both inputs)."""
    from transformers import T5Config, T5ForConditionalGeneration
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=1024, d_model=128, d_kv=32, d_ff=512, num_layers=2,
                   num_decoder_layers=2, num_heads=4, decoder_start_token_id=0)
    model = T5ForConditionalGeneration(cfg).train()
    ids = torch.randint(0, cfg.vocab_size, (2, 64))
    b = torch.export.Dim("batch", min=1, max=4096)
    s = torch.export.Dim("seq", min=2, max=512)
    t = torch.export.Dim("tgt", min=2, max=512)
    ep = torch.export.export(
        model, (), kwargs={"input_ids": ids, "decoder_input_ids": ids, "use_cache": False},
        dynamic_shapes={"input_ids": {0: b, 1: s}, "decoder_input_ids": {0: b, 1: t},
                        "use_cache": None})
    save("t5", ep)
    module = ep.module()
    decoder_ids = torch.randint(0, cfg.vocab_size, (2, 64))
    state = list(module.parameters()) + list(module.buffers()) + [decoder_ids]

    def logits(x):
        out = module(input_ids=x, decoder_input_ids=decoder_ids, use_cache=False)
        return out[0] if isinstance(out, (tuple, list)) else out.logits
    row = {"id": "t5", "shape": list(ids.shape), "decoder_shape": list(decoder_ids.shape),
           "dtype": str(ids.dtype),
           "params": sum(p.numel() for p in model.parameters()),
           "saved_activation_bytes": saved_bytes(logits, ids, state),
           "what": "ep.module(): the exported program, trained as exported; its first output "
                   "(the logits), both token inputs excluded"}
    MEASURED["t5"] = row
    print(f"  {row}")


MODELS = {
    "resnet18": lambda: vision("resnet18", torchvision.models.resnet18),
    "mobilenet_v2": lambda: vision("mobilenet_v2", torchvision.models.mobilenet_v2),
    "vit_b_16": lambda: vision("vit_b_16", torchvision.models.vit_b_16),
    "resnet50": lambda: vision("resnet50", torchvision.models.resnet50),
    "mobilenet_v3_large": lambda: vision("mobilenet_v3_large", torchvision.models.mobilenet_v3_large),
    "convnext_tiny": lambda: vision("convnext_tiny", torchvision.models.convnext_tiny),
    "swin_t": lambda: vision("swin_t", torchvision.models.swin_t),
    "convnet": convnet,
    "transformer": transformer,
    "unet": unet,
    "unet_bilinear": lambda: unet("unet_bilinear", bilinear=True),
    "activations": activations,
    "norm_act": norm_act,
    "prelu": prelu,
    "audio": audio,
    "splits": splits,
    "lstm": lambda: recurrent("lstm", LstmNet, (2, 12, 16)),
    "lstm_bidir": lambda: recurrent("lstm_bidir", BiLstmNet, (2, 12, 8)),
    "lstm_nobias": lambda: recurrent("lstm_nobias", LstmNoBiasNet, (12, 2, 16), batch_dim=1),
    "lstm_proj": lambda: recurrent("lstm_proj", LstmProjNet, (2, 12, 16)),
    "lstm_proj_bidir": lambda: recurrent("lstm_proj_bidir", BiLstmProjNoBiasNet, (12, 2, 8),
                                         batch_dim=1),
    "gru": lambda: recurrent("gru", GruNet, (2, 12, 16)),
    "gru_bidir": lambda: recurrent("gru_bidir", BiGruNoBiasNet, (12, 2, 8), batch_dim=1),
    "rnn": lambda: recurrent("rnn", RnnNet, (2, 12, 16)),
    "rnn_relu_bidir": lambda: recurrent("rnn_relu_bidir", BiRnnReluNet, (12, 2, 8), batch_dim=1),
    # Without dropout between the layers: the models torch.onnx can export
    # while training (test/Inputs/onnx/generate_small.py).
    "lstm_nobias_dynamo": lambda: onnx_dynamo("lstm_nobias", LstmNoBiasNet, (12, 2, 16)),
    "gru_bidir_dynamo": lambda: onnx_dynamo("gru_bidir", BiGruNoBiasNet, (12, 2, 8)),
    "reductions": reductions,
    "reductions_smallest": reductions_smallest,
    "reductions_extremes": reductions_extremes,
    "gru_stack": lambda: recurrent("gru_stack", lambda: GruNet(dropout=0.0), (2, 12, 16)),
    "lstm_bidir_stack": lambda: recurrent("lstm_bidir_stack", lambda: BiLstmNet(num_layers=2),
                                          (2, 12, 8)),
    "rnn_stack": lambda: recurrent("rnn_stack", lambda: RnnNet(dropout=0.0), (2, 12, 16)),
    "unsupported": unsupported,
    "where_grad": where_grad,
    "llama": lambda: causal_lm("llama", "llama.json"),
    "gpt2": lambda: causal_lm("gpt2", "gpt2.json"),
    "bert": bert,
    "bert_large": lambda: bert("bert_large", large=True),
    "t5": t5,
    "bad": bad,
    "bad_recurrent": bad_recurrent,
    "bad_splits": bad_splits,
    "bad_reductions": bad_reductions,
}

if __name__ == "__main__":
    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, transformers {transformers.__version__}")
    for n in sys.argv[1:] or MODELS:
        MODELS[n]()
    if MEASURED:
        path = ROOT / "benchmarks" / "accuracy" / "results" / f"pt2-torch-{torch.__version__.split('+')[0]}-cpu.json"
        rows = json.loads(path.read_text()) if path.exists() else {"rows": {}}
        rows["rows"].update(MEASURED)
        rows["measured_with"] = (f"torch {torch.__version__} cpu (PyPI wheel), "
                                 f"{platform.platform()}, {datetime.date.today()}")
        path.write_text(json.dumps(rows, indent=1) + "\n")
        print(f"wrote {path}")
