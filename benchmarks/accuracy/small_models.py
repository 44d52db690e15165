"""Small models that both fixture generators build: export_pt2.py (torch 2.x,
torch.export archives) and test/Inputs/onnx/generate_small.py (Debian's
torch 1.13, ONNX). Standard torch only, so either environment imports it.
"""
import torch


class TinyUNet(torch.nn.Module):
    """A two-level UNet: ConvTranspose2d and interpolate on the way up, a
    GroupNorm (or, for the ONNX fixture unet.onnx, a BatchNorm2d) on the
    skip connection's concatenation. `bilinear` interpolates bilinearly with
    align_corners=True (nn.Upsample's form in the widely copied UNet
    implementations), else nearest."""

    def __init__(self, group_norm=True, bilinear=False):
        super().__init__()
        self.mode = ({"mode": "bilinear", "align_corners": True} if bilinear
                     else {"mode": "nearest"})
        self.enc = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.down = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.up = torch.nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.norm = (torch.nn.GroupNorm(4, 16) if group_norm
                     else torch.nn.BatchNorm2d(16))
        self.dec = torch.nn.Conv2d(16, 2, 3, padding=1)

    def forward(self, x):
        e = torch.relu(self.enc(x))
        d = torch.relu(self.down(torch.nn.functional.max_pool2d(e, 2)))
        u = self.up(d) + torch.nn.functional.interpolate(d[:, :8], scale_factor=2.0,
                                                         **self.mode)
        return self.dec(self.norm(torch.cat([u, e], 1)))


class ActNet(torch.nn.Module):
    """The activations of issue 22's list between convolutions: LeakyReLU,
    ELU, SELU, CELU, Mish, Softplus; in place where torch.nn offers it
    (LeakyReLU_, SELU_, Mish_) unless `inplace` is false (ONNX has no
    in-place ops). The ONNX fixture uses Softplus's beta 1 (ONNX's Softplus
    has no beta)."""

    def __init__(self, inplace=True, softplus_beta=2.0):
        super().__init__()
        self.convs = torch.nn.ModuleList(
            torch.nn.Conv2d(c, 8, 3, padding=1) for c in (3, 8, 8, 8, 8, 8))
        self.acts = torch.nn.ModuleList([
            torch.nn.LeakyReLU(0.2, inplace=inplace), torch.nn.ELU(),
            torch.nn.SELU(inplace=inplace), torch.nn.CELU(0.5),
            torch.nn.Mish(inplace=inplace),
            torch.nn.Softplus(beta=softplus_beta)])
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        for conv, act in zip(self.convs, self.acts):
            x = act(conv(x))
        return self.fc(x.mean((2, 3)))


class NormActNet(torch.nn.Module):
    """InstanceNorm2d and PReLU between convolutions (issue 22's list): an
    affine InstanceNorm and a per-channel PReLU, then a plain InstanceNorm
    and a PReLU with one slope, the mean over the image, a Linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm1 = torch.nn.InstanceNorm2d(8, affine=True)
        self.act1 = torch.nn.PReLU(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.norm2 = torch.nn.InstanceNorm2d(8)
        self.act2 = torch.nn.PReLU()
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = self.act1(self.norm1(self.conv1(x)))
        x = self.act2(self.norm2(self.conv2(x)))
        return self.fc(x.mean((2, 3)))


class TinyAudioNet(torch.nn.Module):
    """Conv1d over a waveform (wav2vec's feature encoder in small): a
    strided Conv1d, GELU, a grouped padded Conv1d, GroupNorm over [N, C, L],
    GELU, the mean over time, a Linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv1d(1, 16, 10, stride=5)
        self.conv2 = torch.nn.Conv1d(16, 32, 3, stride=2, padding=1, groups=2)
        self.norm = torch.nn.GroupNorm(4, 32)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        x = torch.nn.functional.gelu(self.conv1(x))
        x = torch.nn.functional.gelu(self.norm(self.conv2(x)))
        return self.fc(x.mean(2))


class LstmNet(torch.nn.Module):
    """A sequence classifier: a 2-layer batch-first LSTM (dropout between
    the layers), its last step's hidden state, a Linear."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(16, 32, num_layers=2, batch_first=True, dropout=0.25)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


class BiLstmNet(torch.nn.Module):
    """A bidirectional batch-first LSTM (two directions concatenated; one
    layer, or a stack without dropout), the mean over time, a Linear."""

    def __init__(self, num_layers=1):
        super().__init__()
        self.rnn = torch.nn.LSTM(8, 24, num_layers=num_layers, bidirectional=True,
                                 batch_first=True)
        self.fc = torch.nn.Linear(48, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y.mean(1))


class LstmNoBiasNet(torch.nn.Module):
    """A time-first LSTM without biases whose last hidden state (hy) feeds a
    Linear: the gradient reaches the layer through hy, not its output."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(16, 40, bias=False)
        self.fc = torch.nn.Linear(40, 10)

    def forward(self, x):
        _, (h, _) = self.rnn(x)
        return self.fc(h[-1])


class GruNet(torch.nn.Module):
    """LstmNet with a GRU: 2 batch-first layers of 32, dropout between
    them (torch.onnx exports none while training: dropout=0 there), the
    last step into a Linear."""

    def __init__(self, dropout=0.25):
        super().__init__()
        self.rnn = torch.nn.GRU(16, 32, num_layers=2, batch_first=True, dropout=dropout)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


class BiGruNoBiasNet(torch.nn.Module):
    """A time-first bidirectional GRU without biases, the mean over time
    into a Linear."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(8, 24, bidirectional=True, bias=False)
        self.fc = torch.nn.Linear(48, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y.mean(0))


class RnnNet(torch.nn.Module):
    """LstmNet with an Elman RNN (tanh): 2 batch-first layers of 32, dropout
    between them (GruNet's dropout), the last step into a Linear."""

    def __init__(self, dropout=0.25):
        super().__init__()
        self.rnn = torch.nn.RNN(16, 32, num_layers=2, batch_first=True, dropout=dropout)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


class BiRnnReluNet(torch.nn.Module):
    """A time-first bidirectional ReLU RNN without biases, the mean over
    time into a Linear."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.RNN(8, 24, nonlinearity="relu", bidirectional=True, bias=False)
        self.fc = torch.nn.Linear(48, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y.mean(0))


class SplitNet(torch.nn.Module):
    """One projection split into pieces three ways (split with sizes, chunk,
    unbind), some pieces unused: autograd concatenates the pieces' gradients
    once they are all in (SplitBackward, UnbindBackward), zeros for the
    unused ones."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 3 * 128)
        self.out = torch.nn.Linear(64, 10)

    def forward(self, x):
        q, k, v = self.proj(x).split([128, 128, 128], dim=-1)
        h = torch.sigmoid(q) * torch.tanh(k) + v
        first, second = h.chunk(2, dim=-1)
        rows = (first * second).unbind(1)
        return self.out(rows[0] + rows[-1])


class LstmProjNet(torch.nn.Module):
    """LstmNet with projections (proj_size 12: oneDNN does not run them, the
    CPU runs LSTMCell step by step): 2 batch-first layers of 32, dropout
    between them, the last step into a Linear."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(16, 32, num_layers=2, batch_first=True, dropout=0.25,
                                 proj_size=12)
        self.fc = torch.nn.Linear(12, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


class BiLstmProjNoBiasNet(torch.nn.Module):
    """A time-first bidirectional LSTM without biases, projected to 8, the
    mean over time into a Linear."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(8, 24, bidirectional=True, bias=False, proj_size=8)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y.mean(0))


class ReduceNet(torch.nn.Module):
    """Reductions (issue 22): a projection's sum over time, its top 4 over
    the features and its maximum over time (values and indices), joined,
    and the sum of everything as a second term, into a Linear. With
    `smallest`, the 4 smallest (largest=False) and the minimum. With
    `extremes`, the maximum over time as torch.amax, and as second terms
    the maximum of everything (x.max(), aten.max.default) less each row's
    minimum (torch.amin over two dimensions)."""

    def __init__(self, smallest=False, extremes=False):
        super().__init__()
        self.smallest = smallest
        self.extremes = extremes
        self.proj = torch.nn.Linear(16, 64)
        self.out = torch.nn.Linear(64 + 64 + 8 * 4, 10)

    def forward(self, x):
        h = torch.tanh(self.proj(x))
        total = h.sum(dim=1)
        top, _ = h.topk(4, dim=-1, largest=not self.smallest)
        if self.extremes:
            peak = h.amax(dim=1)
        else:
            peak, _ = h.min(dim=1) if self.smallest else h.max(dim=1)
        y = self.out(torch.cat([total, peak, top.flatten(1)], dim=-1))
        if self.extremes:
            return y + h.max() - h.amin(dim=(1, 2)).unsqueeze(-1)
        return y + h.sum()
