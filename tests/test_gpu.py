"""Stage 3: the GPU a log is about, from the formats logs print it in; --gpu/--cc win."""

import pytest

from cudalogs import explain
from cudalogs.errors import UnknownGpuError
from cudalogs.gpu import context, resolve
from cudalogs.normalize import lines


def detect(text, kb):
    return context(list(lines(text)), kb.catalog, kb.facts)


@pytest.mark.parametrize(
    ("log_line", "name", "cc"),
    [
        ("  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes", "NVIDIA GeForce RTX 3090", "8.6"),
        ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
         "NVIDIA GeForce RTX 5090", "12.0"),
        ("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
         "Your Tesla T4 GPU has compute capability 7.5.", "Tesla T4", "7.5"),
        ("Found GPU0 GeForce GTX 1080 which is of cuda capability 6.1.", "NVIDIA GeForce GTX 1080", "6.1"),
        ("    Found GPU0 Tesla V100-SXM2-32GB which requires CUDA_VERSION >= 9000 for",      # PyTorch 0.3-1.x
         "Tesla V100-SXM2-32GB", "7.0"),
        ("Minimum capability: 80. Current capability: 75.", "compute capability 7.5", "7.5"),
        ("  what():  This program was not compiled for SM 75", "compute capability 7.5", "7.5"),   # Thrust/CUB
        ("GPU #0 GRID A100D-8C (108x64 cores) (Cap 8.0) (8187.9 MB)",       # VanitySearch#139
         "GRID A100D-8C", "8.0"),
        ("Creating instance retinaface on GPU 0 (7.0) using artifact 'model.pt'",                  # Triton server
         "compute capability 7.0", "7.0"),
        ("    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)",
         "compute capability 7.5", "7.5"),
        ("|   0  Tesla V100-SXM2-32GB           On  | 00000000:00:04.0 Off |                    0 |",
         "Tesla V100-SXM2-32GB", "7.0"),
        ("GPU 0: NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090", "8.6"),
        ("[computer][0]:major=8, minor=6", "compute capability 8.6", "8.6"),
        ('msg="inference compute" id=GPU-1 library=cuda compute=8.6 driver=12.4 name="NVIDIA GeForce RTX 3090" total="24 GiB"',
         "NVIDIA GeForce RTX 3090", "8.6"),
    ],
)
def test_gpu_from_each_log_format(tiny_kb, log_line, name, cc):
    ctx = detect(log_line, tiny_kb)
    assert (ctx.gpu.name, ctx.gpu.cc, ctx.source) == (name, cc, "log")


def test_amd_gfx_target(tiny_kb):
    ctx = detect("  Device 0: AMD Radeon RX 6700 XT, gfx1031 (0x1031), VMM: no", tiny_kb)
    assert (ctx.gpu.vendor, ctx.gpu.gfx, ctx.gpu.hsa_override) == ("amd", "gfx1031", "10.3.0")


def test_the_devices_own_report_beats_a_listing(tiny_kb):
    log = "|   0  Tesla V100-SXM2-32GB   On  | 0 |\nYour Tesla T4 GPU has compute capability 7.5.\n"
    ctx = detect(log, tiny_kb)
    assert (ctx.gpu.name, ctx.line_no) == ("Tesla T4", 2)
    assert ctx.others == ("Tesla V100-SXM2-32GB",)


def test_a_capability_only_report_borrows_the_name_seen_elsewhere(tiny_kb):
    ctx = detect("GPU 0: Tesla T4\nMinimum capability: 80. Current capability: 75.\n", tiny_kb)
    assert (ctx.gpu.name, ctx.gpu.cc) == ("Tesla T4", "7.5")


def test_versions_and_os_are_captured(tiny_kb):
    log = ("PyTorch version: 2.1.0+cu121\nCUDA used to build PyTorch: 12.1\n"
           "Nvidia driver version: 535.104.05\nOS: Ubuntu 22.04.3 LTS (x86_64)\n")
    ctx = detect(log, tiny_kb)
    assert ctx.version_map == {"torch": "2.1.0+cu121", "cuda": "12.1", "driver": "535.104.05"}
    assert ctx.os == "linux"


def test_flags_win_over_the_log(tiny_kb):
    override = resolve(None, "8.6", tiny_kb.catalog)
    ctx = context(list(lines("GPU 0: Tesla T4")), tiny_kb.catalog, tiny_kb.facts, override)
    assert (ctx.gpu.cc, ctx.source, ctx.others) == ("8.6", "flag", ("Tesla T4",))


@pytest.mark.parametrize(("name", "cc"), [("tesla t4", "7.5"), ("RTX 3090", None), ("GeForce RTX 3090", "8.6"),
                                          ("sm_86", "8.6"), ("12.0", "12.0"), ("gfx1031", None)])
def test_resolve_names_and_capabilities(tiny_kb, name, cc):
    if cc is None and name == "RTX 3090":
        assert resolve(name, None, tiny_kb.catalog).name == "NVIDIA GeForce RTX 3090"
        return
    gpu = resolve(name, None, tiny_kb.catalog)
    assert gpu.cc == (cc or "")


def test_unknown_name_suggests(tiny_kb):
    with pytest.raises(UnknownGpuError, match="Did you mean: NVIDIA GeForce GTX 1080"):
        resolve("GTX 1800", None, tiny_kb.catalog)


@pytest.mark.parametrize(("line", "cc"), [
    ("CUDA SETUP: PyTorch settings found: CUDA_VERSION=117, Highest Compute Capability: 3.7.", "3.7"),
    ("PyTorch settings found: CUDA_VERSION=124, Highest Compute Capability: (8, 9).", "8.9"),
])
def test_bitsandbytes_diagnostics_name_the_capability(kb, line, cc):
    assert explain(line, kb=kb).gpu.gpu.cc == cc


@pytest.mark.parametrize(("line", "cc"), [
    ("[04/28/2024-15:57:10] [TRT-LLM] [I] Compute capability: (7, 5)", "7.5"),
    ("OSError: Could not find compatible tinycudann extension for compute capability 86.", "8.6"),
    ("TensorFlow was not built with CUDA kernel binaries compatible with compute capability 9.0. CUDA kernels will be "
     "jit-compiled from PTX, which could take 30 minutes or longer.", "9.0"),
    ("Device capability v2.1.0 not supported by available toolchain", "2.1"),
    ("NotImplementedError: No compiled cutlass_scaled_mm for a compute capability less than CUDA device capability: 75",
     "7.5"),
    ("                     Compute Capability: 7.5", "7.5"),               # numba's cuda.detect()
    ("My GPU has a compute capability of 6.1, so it should work", "6.1"),  # a user's own words
    ("The computing power of the graphics card is 8.6.", "8.6"),            # a translation of 算力
    ("GPU Compute Capability: 6.1, Driver API Version: 11.7, Runtime API Version: 11.7", "6.1"),  # PaddlePaddle
    ("PyTorch Current Device Capability: (8, 6)", "8.6"),
    ("your gpu arch (8, 9)", "8.9"),                                      # spconv
    ("ValueError: Unsupported CUDA architecture: sm87", "8.7"),           # SageAttention
    ("[i 0503 16:10:21.331000 16 init.cc:62] Found cuda archs: [89,]", "8.9"),  # Jittor
    ("AssertionError: sm61 not supported yet.", "6.1"),                   # TVM's CUTLASS tables (MLC LLM)
    # text-embeddings-inference: "runtime" is the device, "compile time" the image's build target
    ("Could not start backend: Runtime compute cap 75 is not compatible with compile time compute cap 80", "7.5"),
    # TensorRT "expects" the running GPU's capability; "got" is the engine's (TensorRT#564, a GTX 1060)
    ("The engine plan file is generated on an incompatible device, expecting compute 6.1 got compute 7.5, please rebuild.",
     "6.1"),
    # ComfyUI-QwenVL: the RTX 4090 is the gate's example; the device is the capability after it
    ("ERROR: FP8 models require a GPU with Compute Capability 8.9 or higher (e.g., RTX 4090). Your GPU's capability is 8.6.",
     "8.6"),
    # vLLM's kernel selection: the minimum first, the device second (two spaces as printed, vllm#30602)
    ("MacheteLinearKernel requires capability 90, current compute  capability is 75", "7.5"),
    ("ERROR: Can't start miner, GPU architecture CC 8.6 is not supported by CUDA v10.0", "8.6"),   # T-Rex
    ("compute capability mismatch for device 0: wanted 6.1, have 3.7", "3.7"),                     # kmcuda
    ("java.lang.RuntimeException: Device architecture 61 is unsupported.", "6.1"),                # cudf-spark
    ("-- Autodetected CUDA architecture(s):  8.6", "8.6"),                                         # CMake FindCUDA
    (" * GPU #0       PCI:0000:01:00 GeForce GT 630 @ 1620/650 MHz 4x16 8x25 arch:21 SMX:2", "2.1"),  # xmrig-nvidia
    ("GPU #0: GeForce GTS 250, 512 MB available, 16 compute units, capability: 1.1", "1.1"),       # Claymore
    ('Device[0]: cores = 448; computeCapability = 2.0; type = "Tesla S2050"; total memory', "2.0"),  # CNTK
    ("[guppy/info] CUDA device 0 (compute 7.5) initialised, memory limit 11554258944B", "7.5"),     # Guppy
    # TensorFlow 2.x "Found device 0 with properties:"; a card the catalog does not hold
    ("pciBusID: 0000:01:00.0 name: GeForce GT 220 computeCapability: 1.2", "1.2"),
    ('     "cuda:0"   : "NVIDIA RTX A1000 Laptop GPU" (4 GiB, sm_86, mempool enabled)', "8.6"),  # NVIDIA Warp
    # XMRig 5.x-6.x: a GT 730 exists as 2.1 and as 3.5; the arch it prints decides
    (" * CUDA GPU     #0 02:00.0 GeForce GT 730 1400/800 MHz smx:2 arch:21 mem:1689/2048 MB", "2.1"),
    ("LOG:  GPU0 GeForce GT 440 (96 CUDA cores, 1620MHz), L2 128KB, RAM 1023MB (128bits, 900MHz), capability 2.1",
     "2.1"),                                                                                       # PG-Strom
    ("tvm.error.InternalError: Check failed: (0) is false: Unsupported target for gemm: cuda -keys=cuda,gpu -arch=sm_120 "
     "-max_num_threads=1024 -thread_warp_size=32", "12.0"),                                       # TileLang (TVM)
    ("Compute capability: (12, 0)", "12.0"),                           # a printout of get_device_capability()
    # PyTorch's arch-list warning pasted from the capability on, the GPU's name cut off
    ("....CUDA capability sm_120 is not compatible with the current PyTorch installation.", "12.0"),
])
def test_messages_that_report_the_devices_own_capability(kb, line, cc):
    assert explain(line, kb=kb).gpu.gpu.cc == cc


def test_a_reported_capability_brings_its_own_family(kb):
    # The GT 730 was sold as a Fermi (2.1) and a Kepler (3.5) card; XMRig prints which one this is
    gpu = explain(" * CUDA GPU     #0 02:00.0 GeForce GT 730 1400/800 MHz smx:2 arch:21 mem:1689/2048 MB", kb=kb).gpu.gpu
    assert (gpu.name, gpu.cc, gpu.family, gpu.tensor_cores) == ("GeForce GT 730", "2.1", "fermi", False)
    assert gpu.smem_per_block is None  # data/archs.toml has no Fermi row, so no limit is claimed for it


def test_nvidia_smi_short_names_still_resolve(kb):
    assert explain("GPU: Tesla V100-SXM2\nRuntimeError: boom", kb=kb).gpu.gpu.cc == "7.0"


@pytest.mark.parametrize(("log_line", "cc"), [
    ("  device 0: nvidia geforce rtx 3090, compute capability 8.6, vmm: yes", "8.6"),
    ("minimum capability: 80. current capability: 75.", "7.5"),
    ("found gpu0 geforce gtx 1080 which is of cuda capability 6.1.", "6.1"),
])
def test_a_lowercased_log_still_names_its_gpu(tiny_kb, log_line, cc):
    assert detect(log_line, tiny_kb).gpu.cc == cc


@pytest.mark.parametrize(("typed", "name"), [
    ("2080ti 运行报错", "NVIDIA GeForce RTX 2080 Ti"),
    ("my RTX2080Ti crashes", "NVIDIA GeForce RTX 2080 Ti"),
    ("on a GTX1080", "NVIDIA GeForce GTX 1080"),
    ("I tried running it on 5090, but it didn't work.", "NVIDIA GeForce RTX 5090"),   # "on" before a GeForce number
    ("two 3060ti cards", "NVIDIA GeForce RTX 3060 Ti"),
    ("使用v100在运行RL章节的示例", "Tesla V100"),              # no space between a name and Chinese words
    ("我电脑是独立显卡5060，选择CUDA加速后报错", "NVIDIA GeForce RTX 5060"),
    ("八卡3090训练时报错", "NVIDIA GeForce RTX 3090"),
    ("my 3090 GPU stops after an hour", "NVIDIA GeForce RTX 3090"),
    ("My graphics card is an NVIDIA 3080 with 16GB", "NVIDIA GeForce RTX 3080"),
    ("I have a GTX 1080.", "NVIDIA GeForce GTX 1080"),         # a full stop after the name
    ("It fails on Colab (T4).", "Tesla T4"),
    ("GPU: 2x A10 24GB", "NVIDIA A10"),
    ("installed on a machine with an A5000 graphics card", "NVIDIA RTX A5000"),
    ("training on 8xA100 80GB", "NVIDIA A100"),                # a count glued to the name
    ("dual 4090GPU workstation", "NVIDIA GeForce RTX 4090"),
    ("我用的4090D跑不起来", "NVIDIA GeForce RTX 4090 D"),
    ("6700xt显卡 无法使用", "AMD Radeon RX 6700 XT"),
    ("old laptop with a gt650m", "GeForce GT 650M"),
    ("RTX 2070S, driver 551", "NVIDIA GeForce RTX 2070 SUPER"),
    ("I get this error with my 3090, tried updating triton", "NVIDIA GeForce RTX 3090"),  # a possessive before it
    ("My GPU is 4090, nvidia driver is 525.60.11", "NVIDIA GeForce RTX 4090"),
    ("我的显卡是2070S驱动是560.70", "NVIDIA GeForce RTX 2070 SUPER"),
    ("我是5080笔记本", "NVIDIA GeForce RTX 5080"),               # a laptop word after the number
    ("3090 Ti met same problem.", "NVIDIA GeForce RTX 3090 Ti"),  # the Ti says it is a card
    ("I am using a GTX2080 Ti 22G for training", "NVIDIA GeForce RTX 2080 Ti"),  # the other GeForce prefix
    ("gtx3090，cuda=11.0，pytorch=1.7", "NVIDIA GeForce RTX 3090"),
    ("Running DeepSeek R1 on 8x RTX 6000 PRO", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
    ("CentOS6.3+P40+CUDA9.0+cudnn7.6", "Tesla P40"),              # a setup listed with "+"
    ("ubuntu18.04+cuda10.1+rtx2080运行程序", "NVIDIA GeForce RTX 2080"),
    ("My gpu in this setup is a 1060 6gb", "NVIDIA GeForce GTX 1060"),  # its memory after the number
    ("My card (RTX 5000 Max-Q 16GB) doesn't support bf16", "Quadro RTX 5000"),
    ("I have a tesla k40 and it fails", "Tesla K40m"),
    ("NVIDIA GeForce GTX 970M 6GB VRAM", "GeForce GTX 970M"),
    ("We run 8 NVIDIA H100s in a node", "NVIDIA H100"),          # a plural
    ("two RTX 3090s", "NVIDIA GeForce RTX 3090"),
    ("my RTX 2070s", "NVIDIA GeForce RTX 2070 SUPER"),           # ...but 2070s is a SUPER
    ("My GPUs are a pair of 3060s 12gb", "NVIDIA GeForce RTX 3060"),  # no 3060 SUPER exists: a plural
    ("GPU 0: NVIDIA A16-8Q", "NVIDIA A16"),                      # a vGPU profile
    ("name: GeForce RTX 2070 major: 7 minor: 5 memoryClockRate(GHz): 1.62", "NVIDIA GeForce RTX 2070"),
    ("RTX-5090D crashes", "NVIDIA GeForce RTX 5090 D"),
    ("GPU：4090", "NVIDIA GeForce RTX 4090"),                    # a full-width colon
    ("a 4070 Super", "NVIDIA GeForce RTX 4070 SUPER"),          # the suffix alone says it is a card
    ("Quadro K2200", "Quadro K2200"),
    ("on the K4000 GPU", "Quadro K4000"),                       # a Quadro K/M/P model without "Quadro"
    ("Nvidia M1200 laptop", "Quadro M1200"),
    ("mine is 3090 and it fails", "NVIDIA GeForce RTX 3090"),
    ("Running on a 3050 @ 35W", "NVIDIA GeForce RTX 3050"),         # an article before the number
    ("My environment is: single 4090, python3.8", "NVIDIA GeForce RTX 4090"),
    ("I ran the code using 3090, but encountered NCCL Error 1", "NVIDIA GeForce RTX 3090"),
    ("RVC1006Nvidia が 5090 rtx で動作しない", "NVIDIA GeForce RTX 5090"),  # the series word after the number
    ("I have GTX750-ti with CC 5.0", "GeForce GTX 750 Ti"),        # a hyphen before the Ti
    ("fails to compile at runtime on RTX 50 series GPUs", "GeForce RTX 50 series"),  # a whole generation
    ("When trying to run this on a RTX50xx card", "GeForce RTX 50 series"),   # the generation written as one word
    ("my RTX 30XX card", "GeForce RTX 30 series"),
    ("vllm on AMD MI300x GPU", "AMD Instinct MI300X"),             # Instinct needs no "Instinct"
    ("8*A30-24G", "NVIDIA A30"),                                   # the memory glued on with a hyphen
    ("the DGX Spark fails", "NVIDIA GB10"),
    ("GPU: _NVIDIA GeForce RTX 4060_", "NVIDIA GeForce RTX 4060"),  # Markdown emphasis around the name
    ("GPU = NVIDIA GeForce 930MX", "GeForce 930MX"),
    ("两张3090训练报错", "NVIDIA GeForce RTX 3090"),                 # a count word before the number
    ("4x3090 训练", "NVIDIA GeForce RTX 3090"),
    ("3090*2", "NVIDIA GeForce RTX 3090"),
    ("用3090跑的时候", "NVIDIA GeForce RTX 3090"),
    ("2080的显卡", "NVIDIA GeForce RTX 2080"),
    ("4090上跑不起来", "NVIDIA GeForce RTX 4090"),
    ("3060 12G显存", "NVIDIA GeForce RTX 3060"),
    ("The graphics card model is 3060.", "NVIDIA GeForce RTX 3060"),
    ("1650SUPER", "NVIDIA GeForce GTX 1650 SUPER"),
    ("Graphics Card: Nvidia Quadro P600", "Quadro P600"),
    ("My PC is RTX2060.I appreciate it greatly", "NVIDIA GeForce RTX 2060"),  # the next sentence glued to the name
    ("but I use RTX3090.How could I solve it?", "NVIDIA GeForce RTX 3090"),  # ... its first word capitalised
    ("My configuration: PyTorch 2.0.0, CUDA 11.7, GPU 3060, GPU computing power is 8.6", "NVIDIA GeForce RTX 3060"),
    ("on a B200GPU the kernel fails", "NVIDIA B200"),
    ("won't work win 11 , RTX-5060ti-16GB", "NVIDIA GeForce RTX 5060 Ti"),
])
def test_a_gpu_named_as_people_type_it(kb, typed, name):
    assert detect(typed, kb).gpu.name == name


@pytest.mark.parametrize("text", [
    "step 4090 of 10000",             # a bare model number is not taken for a GPU
    "renders on 1080p screens",       # a resolution, not a GTX 1080
    "batch 4090 samples in 3 s",     # a number with no word for a card beside it
    "the t4 and l4 tiers",            # short data-centre names count only in capitals
    "flashed the L4T image",          # L4T (Jetson Linux) is not an L4
    "set TILE=A2 and P4 in the config",  # A2 / P4 are too often something else
    "flag 0xff set",                      # hex, not a count before a name
    "see configs/rtx3090.yaml for the settings",   # a file name after a name's stop is no sentence
    "prices in the 2070s",                # a bare number with a suffix but no word for a card
    "port 3090 is in use",
    "it took 1080 seconds",
    "I bought 2 3090",                    # a count alone does not make a number a card
    "`flshattF` is not supported because: requires A100 GPU",   # the GPU a kernel needs, not the user's
    "Head dim > 64 backward requires A100 or H100",              # each name of a required list
    "this kernel requires NVIDIA A100, H100",
    "only GPUs that have compute capability 8.0 or higher",      # a requirement, not the user's GPU
    "amdgpu too old gfx000",                                     # ollama's placeholder target
    "gfx1030 and gfx1100 are supported",                         # several targets name none
    "set p400 mode",                                             # a four-character Quadro number alone
    "listening on 3090",
    "resolution 1920x1080 ok",                                  # a resolution, not a count and a card
    "1080x1920 image",
    "在2080 年",
    "My M40 24g runs it, 4060ti 16g works fine",                # a list: the bare number beside it is no sighting
    "An Ampere (RTX 30xx) or newer GPU is required",             # a generation required, not the user's
    "This kernel needs at least an\n\nRTX 30xx card",            # the same, wrapped over a blank line
    "loading configs/h100.yaml and a100.json",                   # file names, not cards
])
def test_short_or_bare_tokens_that_are_not_gpus(kb, text):
    assert detect(text, kb).gpu is None


@pytest.mark.parametrize(("text", "gfx"), [
    ("The GPU (gfx1031) is not supported", "gfx1031"),
    ("GFX1103 fails with rocBLAS", "gfx1103"),
])
def test_one_amd_target_named_alone_is_the_users_gpu(kb, text, gfx):
    assert detect(text, kb).gpu.gfx == gfx


def test_an_amd_target_stated_as_a_minimum_is_not_the_users_gpu(kb):
    note = "relion needs at least NVIDIA GPUs with compute 5.0 or AMD MI GPUs with archtiecture gfx906"  # RELION
    assert detect(note, kb).gpu is None


def test_an_amd_target_in_a_wrapped_minimum_is_not_the_users_gpu(kb):
    """RELION's error note wraps the sentence: "at least" ends the line before the target (3dem/relion#1056)."""
    note = ("      -> HAVE MULTIPLE GPUS OF DIFFERNT VERSIONS: relion needs at least NVIDIA\n\n"
            "         GPUs with compute 5.0 or AMD MI GPUs with archtiecture gfx906.\n")
    assert detect(note, kb).gpu is None


@pytest.mark.parametrize(("log", "name"), [
    ("RTX 50 series support is broken\nmy RTX 5080 fails too", "NVIDIA GeForce RTX 5080"),
    ("Does it work on RTX 40 series?\nI have a 4070 Super", "NVIDIA GeForce RTX 4070 SUPER"),
    ("RTX 50 series (RTX 5090) fails", "NVIDIA GeForce RTX 5090"),
])
def test_a_model_beats_the_generation_it_belongs_to(kb, log, name):
    """A series says only the capability; the model a log names is the user's card (and has the same one)."""
    assert detect(log, kb).gpu.name == name


@pytest.mark.parametrize(("log", "cc"), [
    ("|   0  GeForce RTX 208...  Off  | 00000000:21:00.0  On |                  N/A |", "7.5"),  # 2080, Ti, SUPER
    ("|   0  GeForce GTX 106...  Off  | 00000000:03:00.0  On |                  N/A |", "6.1"),
    ("RuntimeError: FlashInfer-CUTLASS MoE kernel does not support current device sm_120", "12.0"),
    ("[Bug]: The quantization method mxfp4 is not supported for the current GPU SM75", "7.5"),
    ("[Bug] Windows + RTX 50 (sm_120): RuntimeError: Rowwise scaling is not currently supported", "12.0"),
    ("[INFO] CUDA[0]: 97.9 GB total, 95.1 GB free - Compute 12.1", "12.1"),   # mistral.rs doctor
    ("Found GPU(s) with compute capability: [3.7, 3.7]", "3.7"),
    ("MY GPU is GT 635M ,compute_capability =2.1", "2.1"),
    ("gpu.go:140: INFO CUDA Compute Capability detected: 8.6", "8.6"),   # ollama, 2023-24
    ("Please NOTE: device: 0, CUDA Capability: 75, Driver Version: 10.0, Runtime Version: 8.0", "7.5"),  # Paddle 1.x
    # TensorFlow 0.x wrote "Ignoring gpu device" (later "Ignoring visible gpu device"); the name is the driver's
    ("Ignoring gpu device (device: 0, name: Tesla K10.G2.8GB, pci bus id: 0000:45:00.0) with Cuda compute capability "
     "3.0. The minimum required Cuda capability is 3.5.", "3.0"),
    ("GPU         : NVIDIA RTX PRO 5000 Blackwell  (compute capability 12.0 / sm_120)", "12.0"),
    ("XlaRuntimeError: FAILED_PRECONDITION: Triton support is only enabled for Ampere GPUs (compute capability 8.0) "
     "and up, but got compute capability 7.5.", "7.5"),
    ("BackendSupportedError: mm_fp4 does not support backend 'trtllm' with capability 120", "12.0"),
    ("No compiled cutlass_scaled_mm kernel for CUDA device capability: 90. Required capability: 90 or 100", "9.0"),
    ("I have a GPU with a compute capability 5.0. I installed cuML with pip", "5.0"),
    ("机器是新架构显卡（Compute Capability 12.0），而你当前环境里的 Paddle 2.5.1 不支持", "12.0"),
    ("- GPU model and memory: Nvidia GeForce 940 MX. Compute Capability 5.0", "5.0"),
    ("won't work win 11 , RTX-5060ti-16GB", "12.0"),                   # a name glued to its memory
    ("                      Name: 'GeForce GTX 550 Ti'\n         ComputeCapability: '2.1'", "2.1"),  # MATLAB gpuDevice
    ("1 device:\n  0: GeForce GT 730 (sm_35, 1.622 GiB / 1.952 GiB available)", "3.5"),  # CUDA.jl; the GT 730 is 2.1 or 3.5
    ("Device Used:  NVIDIA GeForce GT 730\nCapability:  (3, 5)", "3.5"),  # a user's print of get_device_capability()
    ("GPU is GF108 [GeForce GT 730]", "2.1"),                          # lspci names the chip: the Fermi GT 730
    ("Kokkos::Cuda::initialize WARNING: running kernels compiled for compute capability 0.0 on device with compute "
     "capability 3.5 , this will likely reduce potential performance.", "3.5"),  # the build's capability comes first
    ("API Usage Error (Target GPU SM 61 is not supported by this TensorRT release.)", "6.1"),
    ("Mismatched GPU Architecture: The installed PaddlePaddle package was compiled for 75 80 86 89 ,but your current "
     "GPU is 120 Solution: Install the correct wheel package", "12.0"),
    ("RuntimeError: cuFFT doesn't support signals of half type with compute capability less than SM_53, but the device "
     "containing input half tensor only has SM_52", "5.2"),
    ("Rebuild this file with -gpu=cc89 to use NVIDIA Tesla GPU 0", "8.9"),   # NVHPC OpenACC
    ("GPU compute capability 7.5 is below the minimum required 8.0; falling back to CPU.", "7.5"),
    ("NotImplementedError: No compiled get_cutlass_moe_mm_data: no cutlass_scaled_mm kernel for CUDA device "
     "capability: 120. Required capability: 90 or 100", "12.0"),
    # Triton runs ptxas for the device it compiles for; LLVM names it when it is too new for the bundled toolchain
    ("Repro command: C:\\CUDA\\v12.6\\bin\\ptxas.exe -lineinfo -v --gpu-name=sm_75 C:\\tmp\\x.ptx", "7.5"),
    ("ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'", "12.1"),
    ("'sm_120' is not a recognized processor for this target (ignoring processor)", "12.0"),
    ("3. Standard Python import: common_ops - failed\nGPU Info:\n- Compute capability: 121\n- Expected variant: SM121", "12.1"),
    ("ptxas error: Feature '.tile::scatter4' not supported on .target 'sm_121a'", "12.1"),   # Triton's 'a' target
    ("cutlass.cute.nvgpu.common.OpError: OpError: expects arch to be one of ['sm_100a', 'sm_100f'], but got sm_121a",
     "12.1"),                                                             # CuTe DSL names the device it runs on
    ("Can't use CUDA device 0: compute cap. 2.1 (at least 3.0 required)", "2.1"),             # PhoenixMiner
    ("Cannot currently support max_model_len=65536 with block_size=16 on GPU with compute capability (8, 9) "
     "(required shared memory 264252.0 > available shared memory 101376)", "8.9"),             # early vLLM
    ("My GPU is old , Geforce GT620M. Ccminer said", "2.1"),
    ('raise ValueError("Unknown CUDA arch ({}) or GPU not supported".format(arch))\n'
     "ValueError: Unknown CUDA arch (8.6) or GPU not supported", "8.6"),   # torch's extension builder, no arch list set
    ("on my RTX 5090: ValueError: Unknown CUDA arch (10.1) or GPU not supported", "12.0"),  # ...a listed arch: the card wins
])
def test_a_capability_read_from_a_cut_name_or_a_refusal(kb, log, cc):
    assert detect(log, kb).gpu.cc == cc


@pytest.mark.parametrize("log", [
    "|   0  NVIDIA GeForce ...  Off  | 00000000:03:00.0  On |                  N/A |",  # too short to say which
    "ValueError: TRTLLM MHA backend is only supported on Blackwell GPUs (SM100).",      # the GPU required
    # a capability written alone on a line that states a requirement, a class of cards or a list is no device's
    "Make sure you GPUs with compute capability 8.9.",
    "AWQ requires compute capability 7.5",
    "GPUs below compute capability 7.0 are not supported",
    "FP8 is only available with compute capability 8.9 and 9.0.",
    "these quantization methods supported for compute capability 7.0, 8.0 respectively",
    "CUDA capability 5.2 or higher is required",
    "Device 0 does not have CUDA compute capability 5.0 or greater",   # neon: the threshold, not the K20 it ran on
    "rocBLAS error: Cannot read TensileLibrary: Unable to load file: gfx908_metadata.tn.model",  # a file, not the card
    "RuntimeError: minimum compute capability 8.0 is below what this kernel needs",
    "F8E5M2FNUZ and F8E4M3FNUZ types are not supported on non-gfx942 (MI-300) chipsets",   # every target but one
    "the tx2 variable",
    "(flux) [wangxi@v100-4 bitsandbytes]$ nvcc --version",   # a host name
    "root@jetson-tx2-0:/# python3",
    "bf16 is only supported on A100+ GPUs",       # a class of cards a feature needs
    "FlashAttention needs an A100 or newer",
])
def test_no_capability_from_a_name_cut_too_short_or_a_requirement(kb, log):
    assert detect(log, kb).gpu is None


def test_a_device_report_wrapped_over_two_lines_still_names_the_gpu(tiny_kb):
    wrapped = "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4\nGPU has compute capability 7.5."
    ctx = detect(wrapped, tiny_kb)
    assert (ctx.gpu.cc, ctx.line_no) == ("7.5", 1)


def test_the_mention_prefilter_finds_exactly_the_catalog_words(kb):
    """The prefilter is one regex factored by shared prefixes (speed); it must match what a flat list of the words
    would: each first word of a catalog spelling, as a whole word, the longest one where several fit."""
    pattern = kb.catalog.mention_pattern()
    text = "tesla v100-sxm2-32gb, rtx 3090, rtx3090ti, a100s, gtx1080 and teslax rtx30900"  # not: teslax, rtx30900
    assert [m.group(0) for m in pattern.finditer(text)] == ["tesla", "v100-sxm2-32gb", "rtx", "3090", "rtx3090ti", "a100s", "gtx1080"]


@pytest.mark.parametrize(("log", "name"), [
    ("RTX 3060m (6GB)", "NVIDIA GeForce RTX 3060"),      # a laptop chip has its desktop namesake's capability
    ("my gtx1060m fails", "NVIDIA GeForce GTX 1060"),
    ("GTX 960M here", "GeForce GTX 960M"),               # before Pascal it has its own (5.0, not the GTX 960's 5.2)
    ("flash attention是否支持RTX8000", "Quadro RTX 8000"),   # no later card is an RTX 8000
    ("|   0  GRID RTX6000-24Q               On  | 00000000:06:10.0 Off |                  N/A |", "Quadro RTX 6000"),
    ("Device: cuda:0 GRID RTX6000-12 : native", "Quadro RTX 6000"),   # a vGPU profile without its letter
    ("GPU 0: GRID V100D-32C (UUID: GPU-5f1c2d3e)", "Tesla V100"),   # a V100 32GB vGPU: the model's own "D" before the profile
    ("GPU: TX2", "Jetson TX2"),                          # in capitals only: "tx2" is also a variable's name
    ("I try to use your library on JetsonTX2, but it fails", "Jetson TX2"),   # a Jetson written as one word
    ("我的显卡是英伟达3060", "NVIDIA GeForce RTX 3060"),   # "my card is an NVIDIA 3060"
    ("CentOS6.3+P40+CUDA9.0+cudnn7.6", "Tesla P40"),     # "+" joining words is no "or newer"
    ("Device name: NVIDIA L40S-48", "NVIDIA L40S"),      # a profile after the model's own "S"
    ("GPU NVIDIA RTX A2000 6GB  ComputeCapability: '8.6'", "NVIDIA RTX A2000"),   # a capability report keeps the name beside it
    ('msg="inference compute" id=GPU-6af3 library=CUDA compute=8.6 name=CUDA0 description="NVIDIA GeForce RTX 3080 Ti"',
     "NVIDIA GeForce RTX 3080 Ti"),                      # newer ollama: the backend's id as name, the card as description
    ("AMD RYZEN AI MAX PRO 390 w/ Radeon 8050S", "AMD Radeon 8050S"),
    ("|   0  NVIDIA RTX 4000 SFF Ada ...    Off |   00000000:01:00.0 Off |", "NVIDIA RTX 4000 SFF Ada Generation"),
    ("Nvidia Quadro M2200 (GM206GLM)", "Quadro M2200"),                   # a laptop Quadro with its chip
    ("mCudaDriverDeviceManagement.Device[0].Name: GeForce GT 430", "GeForce GT 430"),
    ("I installed pytorch with conda and have a TitanV.", "NVIDIA TITAN V"),          # the name glued
    ("Using device: GeForce GTX 560M  (Compute 2.1)", "GeForce GTX 560M"),
])
def test_laptop_vgpu_and_other_spellings_met_in_logs_name_the_card(kb, log, name):
    assert detect(log, kb).gpu.name == name


def test_a_card_the_user_names_beats_a_target_a_build_script_names(kb):
    log = "The compiler shows that \"Value 'sm_30' is not defined for option 'gpu-name'\" but I am using 2x RTX 3090"
    assert detect(log, kb).gpu.cc == "8.6"


def test_a_bare_model_the_user_owns_competes_with_names_they_quote(kb):
    """No device report: "my 5080" is the user's card, as good as a name, and earlier than the one they quote."""
    log = "Found this issue on my 5080.\nConsumer Blackwell GPUs get misdetected as datacenter Blackwell (sm100/B200)"
    assert detect(log, kb).gpu.name == "NVIDIA GeForce RTX 5080"


def test_a_capability_hip_reports_for_the_amd_target_the_log_names_is_that_amd_gpu(kb):
    """HIP gives an AMD GPU its target's version as "compute capability" (gfx1201 -> 12.0): not a Blackwell card."""
    log = ("Device ID 0 : AMD Radeon Graphics gfx1201\n"
           "with 17.1 GB memory, max. SCLK 2400 MHz, max. MCLK 1258 MHz, memoryBusWidth 32 Bytes, compute capability 12.0")
    gpu = detect(log, kb).gpu
    assert (gpu.vendor, gpu.gfx) == ("amd", "gfx1201")


def test_a_capability_that_is_not_the_amd_targets_version_stays_nvidia(kb):
    assert detect("GPU has compute capability 8.6\ngfx1201 is not in the list", kb).gpu.vendor == "nvidia"


@pytest.mark.parametrize("log", [
    # the arch comes from the list the user set, not from the device
    "ENV TORCH_CUDA_ARCH_LIST=10.1\nValueError: Unknown CUDA arch (10.1) or GPU not supported",
    # CMake probing the compiler with its own default target
    '#$ ptxas -arch=sm_30 -m64 "tmp/CMakeCUDACompilerId.ptx" -o "tmp/CMakeCUDACompilerId.sm_30.cubin"\n'
    "ptxas fatal : Value 'sm_30' is not defined for option 'gpu-name'",
])
def test_a_build_target_the_log_shows_came_from_elsewhere_names_no_gpu(kb, log):
    assert detect(log, kb).gpu is None


def test_without_an_arch_list_the_extension_builders_arch_is_the_devices(kb):
    log = "TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included\nValueError: Unknown CUDA arch (8.6) or GPU not supported"
    assert detect(log, kb).gpu.cc == "8.6"


def test_a_line_naming_variants_of_one_chip_gives_their_capability(kb):
    """Several models on a line are a list, not a sighting, unless they share one capability: then it is known."""
    log = 'I only have V100S GPU, and I got "RuntimeError: FlashAttention only supports Ampere GPUs or newer.". How to inference on V100 without Flash Attention?'
    assert detect(log, kb).gpu.cc == "7.0"
    assert detect("It works on an A100 but fails on the T4", kb).gpu is None


@pytest.mark.parametrize(("log", "inside"), [
    ("fauxpilot-triton-1         | W0907 pinned_memory_manager.cc:236] no CUDA-capable device is detected", True),
    ("$ docker run -it --rm ghcr.io/leejet/stable-diffusion.cpp:master-cuda", True),
    ("root@3f2a1b4c5d6e:/workspace# python train.py", True),
    ("RuntimeError: Found no NVIDIA driver on your system.", False),
    ("the matrix is decomposed into blocks", False),   # "compose" only as a word of its own
])
def test_the_log_says_whether_it_runs_in_a_container(kb, log, inside):
    """`container` in the condition language: one definition (data/log_facts.toml) for every entry that reads it."""
    assert detect(log, kb).container is inside


@pytest.mark.parametrize(("log", "shell"), [
    ("fauxpilot-triton-1         | W0907 pinned_memory_manager.cc:236] no CUDA-capable device is detected", True),
    ("> qna-transformers_1  | RuntimeError: Found no NVIDIA driver on your system.", True),  # quoted in a reply
    ("    geti-action-1  |   return torch._C._xpu_getDeviceCount()", True),  # indented as a Markdown code block
    ("| GPU-1 | NVIDIA A100 | 40 GB |", False),  # a Markdown table is no compose prefix
    ("root@3f2a1b4c5d6e:/workspace# python train.py", True),
    ("$ docker run -it --rm ghcr.io/leejet/stable-diffusion.cpp:master-cuda", False),  # named, not seen from inside
])
def test_container_shell_is_only_the_logs_own_lines_from_inside_one(kb, log, shell):
    assert detect(log, kb).container_shell is shell


@pytest.mark.parametrize(("log", "wsl"), [
    ("Linux DESKTOP-AB12CD 5.15.153.1-microsoft-standard-WSL2 #1 SMP x86_64 GNU/Linux", True),
    ("ldconfig -p | grep libcuda -> /usr/lib/wsl/lib/libcuda.so.1", True),
    ("I run ComfyUI in WSL2 on Windows 11", True),
    ("/data/speech/competitions/IWSLT/k2/build/lib/libk2_log.so", False),   # only the word standing alone
    ("git clone https://github.com/awslabs/amazon-sagemaker-examples", False),
])
def test_the_log_says_whether_it_runs_under_wsl(kb, log, wsl):
    """`wsl` in the condition language: one definition (data/log_facts.toml [[wsl]]) instead of each entry's copy."""
    assert detect(log, kb).wsl is wsl


@pytest.mark.parametrize(("log", "rocm"), [
    ("RuntimeError: HIP error: invalid device function", True),
    ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", True),
    ("torch 2.1.0+rocm5.6 is installed", True),
    ("rocBLAS error: Could not initialize Tensile host: No devices found", True),
    ("export HSA_OVERRIDE_GFX_VERSION=10.3.0", True),
    ("  Device 0: AMD Radeon RX 6800 XT, gfx1030 (0x1030), VMM: no", True),
    # on every CUDA machine: PyTorch's collect_env names HIP, ROCm and MIOpen with N/A
    ("ROCM used to build PyTorch: N/A\nHIP runtime version: N/A\nMIOpen runtime version: N/A", False),
    ("ROCM used to build PyTorch   : N/A", False),
    ("INFO:jax._src.xla_bridge:Unable to initialize backend 'rocm': module 'jaxlib.xla_extension' has no attribute", False),
    ('msg="Dynamic LLM libraries [cpu cpu_avx cpu_avx2 cuda_v11 cuda_v12 rocm_v60102]"', False),
    ("prebuilt binary /zip/ggml-rocm.so not found", False),
    ("I'll ship the chip with the relationship", False),   # "hip" only as a word of its own
])
def test_the_log_says_whether_amds_rocm_stack_is_at_work(kb, log, rocm):
    """`rocm` in the condition language: one definition (data/log_facts.toml [[rocm]]) with its exceptions, instead
    of each entry's own list of AMD words."""
    assert detect(log, kb).rocm is rocm


@pytest.mark.parametrize(("log", "short"), [
    ("OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading ...", True),
    ("Could not load library cudnn_cnn_infer64_8.dll. Error code 1455", True),
    ("OSError: [WinError 126] The specified module could not be found. Error loading cudnn_adv_infer64_8.dll", False),
])
def test_the_log_says_whether_windows_ran_out_of_virtual_memory(kb, log, short):
    """`paging_file_too_small`: error 1455 ends in the same DLL tail as a missing CUDA library, but is a host limit."""
    assert detect(log, kb).paging_file_too_small is short


@pytest.mark.parametrize(("log", "missing"), [
    ("Failed to load ZLUDA: Could not find module 'C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\rocblas.dll' (or one of its dependencies).", True),
    ("10:27:18-836918 WARNING  ZLUDA failed to initialize: no HIP SDK found", True),
    ("Failed to load ZLUDA: Could not find module 'E:\\sd\\.zluda\\nvcuda.dll' (or one of its dependencies).", False),
])
def test_the_log_says_whether_the_hip_sdk_is_missing(kb, log, missing):
    """`hip_sdk_missing`: ZLUDA failing on the SDK's own DLLs is the SDK, not the card (ZLUDA's nvcuda.dll is ZLUDA's)."""
    assert detect(log, kb).hip_sdk_missing is missing


def test_a_vulkan_device_that_ollama_reports_as_compute_0_0_has_no_capability(kb):
    """ollama lists Vulkan devices (here an Intel iGPU it drops) with compute=0.0: that is no capability at all."""
    log = ('level=INFO source=runner.go:405 msg="dropping integrated GPU; to enable, set OLLAMA_IGPU_ENABLE=1" id=0 '
           'library=Vulkan compute=0.0 name=Vulkan0 description="Intel(R) Iris(R) Xe Graphics" pci_id=""')
    gpu = detect(log, kb).gpu
    assert gpu is None or gpu.cc != "0.0"
