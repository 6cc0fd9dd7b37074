"""The GPU catalog: names as they appear in logs -> vendor, family, compute capability or gfx, limits.

The data lives in data/gpus.toml and data/archs.toml (see data/SOURCES.md); this module
only indexes it. Lookups are case-insensitive and tolerate the vendor prefixes that
drivers add or drop ("NVIDIA GeForce RTX 3090" vs "GeForce RTX 3090").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from cudalogs.model import CAPABILITY_ONLY, Gpu

_PREFIXES = ("nvidia ", "amd ", "geforce ", "radeon ", "tesla ", "instinct ")  # "MI300X" is AMD Instinct MI300X
# ASCII only: catalog names are ASCII, and a name written inside CJK text ("用v100在运行", "单卡3080") has no
# space around it, where \w would glue it to the Chinese words on both sides.
# "8xA100": a count, then the name. A "+" separates words: issue templates list the setup as
# "CentOS6.3+P40+CUDA9.0" or "cuda10.1+rtx2080".
_WORD = re.compile(r"\d{1,3}[x×*](?=[A-WYZa-wyz])|[A-Za-z0-9_.-]+")  # "8xA100" is 8 x A100; "RTX 30xx" a series
# A sentence's full stop may follow a name: "a GTX 1080.", even unspaced before the next sentence's first word when
# that is one letter ("My PC is RTX2060.I appreciate", "gtx 1070.i changed") or a capitalised word ("but I use
# RTX3090.How could I solve it?"); a file name ("h100.yaml") is no name. _WORD_END is matched on lowercased text, so
# it lets any word through after the stop; _SENTENCE_GLUED, on the text as written, keeps only a capitalised one.
_WORD_END = r"(?![A-Za-z0-9_-]|\.(?![A-Za-z][a-z]+[\s,;:!?])[A-Za-z0-9_](?![\s,;:!?)]|$))"
_SENTENCE_GLUED = re.compile(r"(?<=\d)\.(?:[A-Za-z]|[A-Z][a-z]+)$")
_MAX_WORDS = 7
_FAMILY_BY_MAJOR = {2: "fermi", 3: "kepler", 5: "maxwell", 6: "pascal", 7: "volta", 8: "ampere", 9: "hopper", 10: "blackwell", 11: "blackwell", 12: "blackwell"}


_TRADEMARK = re.compile(r"\((?:tm|r)\)|[™®]")
_SPACES = re.compile(r"\s+")


def _norm(name: str) -> str:
    """Lowercase, single spaces, no trademark signs: the key names are compared by."""
    name = _TRADEMARK.sub("", name.lower())
    return _SPACES.sub(" ", name).strip(" \t\"'`")


_CARD_WORD = r"(?:显卡|顯卡|卡|gpus?|graphics card|video card|card)"
# Words after a bare number that make it a card: the card words, a laptop/mobile variant ("5080笔记本", "2080 max-q"),
# its memory ("a 1060 6gb", "3060 12G显存"), a count after it ("3090*2", "3090x2"), "上" ("4090上跑": on the 4090)
_AFTER_NUMBER = (rf"(?:的?{_CARD_WORD}|笔记本|筆電|laptop|mobile|max-q|rtx|gtx|\d{{1,2}} ?gb?(?![a-z])|[x×*] ?\d{{1,2}}(?!\d)"
                 r"|上)")
# Words before it: the card words, optionally with "is" ("my GPU is 4090", "显卡是4090"), the vendor, "my"/"我的"
# ("with my 3090", "mine is 3090", "我的1060"): a possessive before a GeForce model number is the user's card; or an
# article or "using" ("got a 5090", "Running on a 3050", "using 3090", "single 4090"): these numbers are not
# years a log would name, and a number that is a card's is followed by no unit (the lookahead below); a count
# ("4x3090", "2*3090", "两张3090", "5块4090"), "use"/"switched to" in Chinese ("用3090跑", "换成5090"), "used", "model is",
# "on" ("running it on 5090"; not a server "listening on 3090").
_BEFORE_NUMBER = (rf"(?:(?:{_CARD_WORD}|nvidia|geforce|英伟达|英偉達)(?:\s(?:is|was)|是|为|為|[:：])?|\bmy|\bmine is|我的"
                  r"|\b(?:a|an|one|single|dual|using|used|model is|(?<!listening )(?<!serving )(?<!bound )on)|(?<![\d.])\d{1,2} ?[x×*]|[张張块塊台用]|换成|換成)")
BARE_MODEL = re.compile(
    rf"(?i)(?<![A-Za-z0-9_.+-])(?P<n1>[1-5]0[5-9]0|16[56]0)(?:(?P<s1>\s?(?:ti|super|s\b))?\s?{_AFTER_NUMBER}"
    rf"|(?P<s3>\ssuper)\b)"  # "a 4070 Super": the suffix alone says it is a card ("3090 Ti" is a catalog key)
    rf"|(?<![A-Za-z]){_BEFORE_NUMBER}\s?(?P<n2>[1-5]0[5-9]0|16[56]0)(?P<s2>\s?(?:ti|super|s))?(?![A-Za-z0-9_+-]|\.\d)")
# Data-centre names shorter than four characters, taken only as written in capitals ("on a T4", "8xA100" is
# long enough anyway): in lowercase, "t4" or "l4" is too often something else. "A2", "P4" and "VII" stay out.
_SHORT_NAMES = frozenset({"a10", "a16", "a30", "a40", "h20", "k80", "l20", "l4", "l40", "m40", "m60", "p40", "t4", "tx2"})
# (not "Quadro RTX 5000": without "Quadro", "RTX 5000" is also the Ada card)
_QUADRO_MODEL = re.compile(r"^quadro ([kmpt]\d{4}m?)$")  # four digits: "p400" alone is too often something else
_SERIES_MODEL = re.compile(r"^(rtx|gtx|gt|mx|rx) (\d{3,4}m?)(?: (ti|super|ti super|xt|xtx|d))?$")


def _squashed(key: str) -> list[str]:
    """How people type a GeForce or Radeon model in their own words: "rtx2080ti", "gtx1080", "rtx 3060ti",
    "gt650m", "rx6700xt", "rtx 2070s", and, when it ends in Ti, XT or D, the bare "2080ti", "6700xt", "4090d"
    (a bare number without it, "4090", is left out: it could be anything)."""
    m = _SERIES_MODEL.match(key)
    if not m:
        return []
    series, number, suffix = m.group(1), m.group(2), (m.group(3) or "").replace(" ", "")
    out = [f"{series}{number}{suffix}", f"{series}{number} {suffix}".strip(), f"{series} {number}{suffix}",
           f"{series}-{number}{suffix}", f"{series}-{number} {suffix}".strip()]  # "RTX-5090D"
    if suffix in ("ti", "super"):
        out += [f"{series}{number}-{suffix}", f"{series} {number}-{suffix}"]  # "GTX750-ti", "RTX 3060-Ti"
    if suffix in ("ti", "xt", "xtx", "d", "super"):
        out.append(f"{number}{suffix}")  # "2080ti", "6700xt", "4090d", "1650super": the glued suffix says it is a card
    if suffix in ("ti", "xt", "xtx"):
        out.append(f"{number} {suffix}")  # "3090 Ti", "6700 XT": the suffix says it is a card
    if series in ("rtx", "gtx") and not number.endswith("m"):
        # the other GeForce prefix ("gtx3090", "GTX 2080 Ti", "rtx 1080"): no model exists under both, and real
        # names are indexed first, so a real "GTX 1660" keeps its own entry
        other = "gtx" if series == "rtx" else "rtx"
        out += [f"{other} {number} {suffix}".strip(), f"{other}{number}{suffix}", f"{other} {number}{suffix}",
                f"{other}{number} {suffix}".strip()]
    if suffix == "super":
        out += [f"{series} {number}s", f"{series}{number}s"]
    if series in ("rtx", "gtx") and not suffix and number.isdigit() and len(number) == 4:
        # the laptop chip written with an "m" ("RTX 3060m", "gtx1060m"): since Pascal a GeForce laptop GPU has its
        # desktop namesake's capability (not before: the GTX 960M is 5.0, the GTX 960 5.2, so three digits stay out)
        out += [f"{series} {number}m", f"{series}{number}m"]
    return [short for short in dict.fromkeys(out) if short != key]


# "h100s", "b200gpu", "a16-8q", "a30-24g", "rtx-5060ti-16gb", "RTX6000-12", "L40S-48" (a vGPU profile printed without
# its letter; not a host name such as "h100-2"): also allowed by the mention prefilter. A model's own "s" (L40S) or
# "d" (GRID V100D-32C, 4090D-24G) may stand before a profile; an "s" not before a plural "s"
_VGPU_SUFFIX = r"(?:-\d{1,3}[abcq]|-\d{2,3}|-\d{1,3}gb?)"
_PLURAL_OR_VGPU_SUFFIX = rf"(?:s|gpus?|{_VGPU_SUFFIX})"
_PLURAL_OR_VGPU = re.compile(rf"^(.*\d(?:ti|xtx?|super)?)(?:s|gpus?)$|^(.*\d(?:ti|xtx?|super|s|d)?){_VGPU_SUFFIX}$")


def _stem(word: str) -> str:
    """A model word without a plural "s", a vGPU profile or its memory ("h100s" -> "h100", "a16-8q" -> "a16",
    "rtx6000-24q" -> "rtx6000", "RTX-5060ti-16GB" -> "rtx-5060ti", "l40s-48" -> "l40s"): tried only when the word as
    written names nothing, so "2070s" stays a SUPER."""
    m = _PLURAL_OR_VGPU.match(word)
    return (m.group(1) or m.group(2)) if m else word


def _trie_regex(words: set[str]) -> str:
    """One regex matching any of `words`, factored by shared prefixes ("rtx(?:3090|40(?:70|90))..."): the engine
    then tries a handful of branches at each position instead of every word (a flat alternation of ~500 catalog
    words cost about 1 ms per 3 KB of log). Longer words come first at each branch, so the longest one matches."""
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def pattern(node: dict[str, dict]) -> str:
        ends = "" in node
        branches = [re.escape(ch) + pattern(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return pattern(trie)


def _words(text: str) -> list[tuple[str, int, int]]:
    """Each word of `text`, lowercased, with its span: without a sentence's full stop after it or Markdown emphasis
    around it ("a GTX 1080.", "_NVIDIA GeForce RTX 4060_")."""
    out = []
    for m in _WORD.finditer(text):
        raw = m.group(0)
        word = _SENTENCE_GLUED.sub("", raw.strip("_")).rstrip(".")
        if word:
            start = m.start() + len(raw) - len(raw.lstrip("_"))
            out.append((word.lower(), start, start + len(word)))
    return out


def _strip_prefixes(key: str) -> str:
    changed = True
    while changed:
        changed = False
        for prefix in _PREFIXES:
            if key.startswith(prefix):
                key, changed = key[len(prefix):], True
    return key


# After a name: "A100+ GPUs", "an A100 or newer", "H100 and above" name a class of cards a feature needs (xFormers'
# "bf16 is only supported on A100+ GPUs"), not the user's card ("CentOS6.3+P40+CUDA9.0" joins words with "+").
_OR_NEWER = re.compile(r"\+(?![A-Za-z0-9])|\s(?:or|and) (?:newer|later|above|higher|up)\b|\s(?:and|or) (?:better|beyond)\b", re.IGNORECASE)
_OTHER_VENDORS_WORDS = {"nvidia": {"radeon", "amd"}, "amd": {"nvidia", "geforce", "gtx", "rtx", "quadro", "tesla"}}
_REQUIREMENT_WORDS = {"requires", "require", "required", "needs", "need"}
_LIST_WORDS = {"or", "and"}


def _ruled_out_by(previous: str, gpu: Gpu) -> bool:
    """Whether the word before a name says it is another vendor's card ("GeForce GTX 780M" is not AMD's Radeon 780M,
    reached through the bare "780m")."""
    return previous in _OTHER_VENDORS_WORDS.get(gpu.vendor, set())


@dataclass
class Catalog:
    """Indexed catalog; built once per process from the bundle."""

    gpus: list[Gpu]
    arch_facts: dict[str, dict[str, Any]]
    gfx_facts: dict[str, dict[str, Any]]
    _by_key: dict[str, Gpu] = field(default_factory=dict)
    _first_words: set[str] = field(default_factory=set)
    _first_word_re: "re.Pattern[str] | None" = None

    @classmethod
    def from_data(cls, gpus: list[dict[str, Any]], archs: list[dict[str, Any]], gfxs: list[dict[str, Any]]) -> "Catalog":
        arch_facts = {str(a["cc"]): a for a in archs}
        gfx_facts = {str(g["gfx"]): g for g in gfxs}
        models = [_gpu_from_row(row, arch_facts, gfx_facts) for row in gpus]
        catalog = cls(models, arch_facts, gfx_facts)
        for gpu, row in zip(models, gpus):
            for spelling in [row["name"], *row.get("aliases", [])]:
                catalog._by_key.setdefault(_norm(spelling), gpu)
                catalog._by_key.setdefault(_strip_prefixes(_norm(spelling)), gpu)
        for key, gpu in list(catalog._by_key.items()):
            for short in _squashed(key):
                catalog._by_key.setdefault(short, gpu)
            if m := _QUADRO_MODEL.match(key):  # "the K4000 GPU", "p4000": a Quadro K/M/P/T model needs no "Quadro"
                catalog._by_key.setdefault(m.group(1), gpu)
            if key.startswith("jetson ") and " " not in key[7:]:  # "JetsonTX2", "Jetson-Nano" (one word)
                for glue in ("", "-", "_"):
                    catalog._by_key.setdefault(f"jetson{glue}{key[7:]}", gpu)
        return catalog

    def lookup(self, name: str) -> Gpu | None:
        """Exact lookup by any spelling, with or without vendor prefixes."""
        key = _norm(name)
        return self._by_key.get(key) or self._by_key.get(_strip_prefixes(key))

    def truncated(self, name: str) -> Gpu | None:
        """A name cut short with "..." (nvidia-smi's table cuts it at 18 characters: "GeForce RTX 208..."): the
        model when one fits, else the capability every fitting model shares ("208..." is the 2080, 2080 Ti or
        2080 SUPER, all 7.5), else nothing."""
        head = _strip_prefixes(_norm(name.rstrip(". ").rstrip("…")))
        if len(head) < 5:
            return None
        fits = {gpu.name: gpu for key, gpu in self._by_key.items() if key.startswith(head)}
        ccs = {gpu.cc for gpu in fits.values()}
        if not fits or len(ccs) != 1 or "" in ccs:
            return None
        return next(iter(fits.values())) if len(fits) == 1 else self.from_cc(ccs.pop(), name.strip())

    def find_in(self, text: str) -> Gpu | None:
        """The longest catalog name contained in `text` (for captured names with extra words)."""
        found = self.mentions(text)
        return max(found, key=lambda pair: len(pair[1]))[0] if found else None

    def mention_pattern(self) -> "re.Pattern[str]":
        """Matches (in lowercase text) a word that begins some catalog spelling: where a GPU name can start."""
        if self._first_word_re is None:
            self._first_words = {key.split(" ", 1)[0] for key in self._by_key}
            alternation = _trie_regex(self._first_words)
            self._first_word_re = re.compile(
                rf"(?<![A-Za-z0-9.-])(?<![A-Za-z0-9.-]_)(?:\d{{1,3}}[x×*])?(?:{alternation}){_PLURAL_OR_VGPU_SUFFIX}?{_WORD_END}")
        return self._first_word_re

    def mentions(self, text: str) -> list[tuple[Gpu, str, int]]:
        """Every catalog GPU named in `text`, with the spelling and the offset.

        Word n-grams looked up in a dict, longest first, starting only at words that begin
        some catalog spelling: linear in the text, where one regex alternation of every
        spelling would test hundreds of branches per character.
        """
        if not self.mention_pattern().search(text.lower()):  # most log lines name no GPU: skip tokenising them
            return []
        words = _words(text)
        out, i = [], 0
        required_end = -2  # the last word of a name a requirement named ("requires A100"): a list may go on from it
        while i < len(words):
            if words[i][0] in self._first_words or _stem(words[i][0]) in self._first_words:
                previous = words[i - 1][0] if i else ""
                # a requirement names the GPU a kernel needs, not the user's ("requires A100 GPU", an xFormers
                # operator's reason), and so does the rest of its list ("requires A100 or H100", "needs A100, H100")
                required = previous in _REQUIREMENT_WORDS or i - 1 == required_end \
                    or (previous in _LIST_WORDS and i - 2 == required_end)
                for n in range(min(_MAX_WORDS, len(words) - i), 0, -1):
                    key = " ".join(w for w, _s, _e in words[i: i + n])
                    short_ok = n == 1 and key in _SHORT_NAMES and text[words[i][1]: words[i][2]] == key.upper()
                    gpu = self._by_key.get(key) if len(key) >= 4 or short_ok else None
                    if gpu is None and len(key) >= 4:
                        head, _sep, last = key.rpartition(" ")
                        gpu = self._by_key.get(f"{head} {_stem(last)}".lstrip())  # "nvidia h100s", "nvidia a16-8q"
                    if gpu is not None and required:
                        required_end = i + n - 1
                        i += n - 1
                        break
                    if gpu is not None and not _ruled_out_by(previous, gpu) \
                            and not _OR_NEWER.match(text, words[i + n - 1][2]):
                        out.append((gpu, text[words[i][1]: words[i + n - 1][2]], words[i][1]))
                        i += n - 1
                        break
            i += 1
        return out

    def bare_models(self, text: str) -> list[tuple[Gpu, str, int]]:
        """GeForce models written as a bare number beside a word for the card: "my 3090 GPU", "5090显卡",
        "单卡3080", "card: 2080ti". A bare number alone ("4090") is left out: it could be anything; with the
        word next to it, it is the card. Only numbers that are GeForce RTX/GTX models in the catalog count."""
        out = []
        for m in BARE_MODEL.finditer(text):
            number = m.group("n1") or m.group("n2")
            suffix = (m.group("s1") or m.group("s2") or m.group("s3") or "").strip().lower()
            # "2070S" is the Super; "3060s" (no 3060 Super exists) is a plural: "a pair of 3060s 12gb"
            suffixes = ("super", "") if suffix == "s" else (suffix,)
            found = next(((g, sfx) for sfx in suffixes for series in ("rtx", "gtx")
                          if (g := self._by_key.get(f"{series} {number} {sfx}".strip())) is not None), None)
            if found is not None:
                start = m.start("n1") if m.group("n1") else m.start("n2")
                out.append((found[0], f"{number}{found[1]}", start))
        return out

    def suggest(self, name: str, n: int = 3) -> list[str]:
        import difflib  # only on the error path

        keys = difflib.get_close_matches(_strip_prefixes(_norm(name)), list(self._by_key), n=n * 3, cutoff=0.6)
        names: list[str] = []
        for key in keys:
            gpu_name = self._by_key[key].name
            if gpu_name not in names:
                names.append(gpu_name)
        return names[:n]

    def from_cc(self, cc: str, name: str = "") -> Gpu:
        """A GPU known only by its compute capability (from `--cc` or a log line)."""
        facts = self.arch_facts.get(cc, {})
        return Gpu(name=name or f"{CAPABILITY_ONLY}{cc}", vendor="nvidia", family=self._family_of(cc), cc=cc,
                   smem_per_block=facts.get("smem_per_block"), tensor_cores=_default_tensor_cores(cc))

    def from_gfx(self, gfx: str, name: str = "") -> Gpu:
        facts = self.gfx_facts.get(gfx, {})
        return Gpu(name=name or gfx, vendor="amd", family=facts.get("family", ""), gfx=gfx,
                   hsa_override=facts.get("hsa_override", ""))

    def _family_of(self, cc: str) -> str:
        """The architecture family of a capability: data/archs.toml's, else by major version (Fermi has no row)."""
        return self.arch_facts.get(cc, {}).get("family") or _FAMILY_BY_MAJOR.get(int(cc.split(".")[0]), "")

    def with_cc(self, gpu: Gpu, cc: str) -> Gpu:
        """Trust the compute capability a log reports over the catalog's (it came from the device).

        The family, tensor cores and shared-memory limit follow the reported capability too: a name can cover two
        chips (the GT 730 is a Fermi 2.1 and a Kepler 3.5 card), and the catalog's facts belong to the chip it lists.
        """
        if gpu.cc == cc:
            return gpu
        facts = self.arch_facts.get(cc, {})
        return replace(gpu, cc=cc, family=self._family_of(cc), tensor_cores=_default_tensor_cores(cc),
                       smem_per_block=facts.get("smem_per_block"))


def _default_tensor_cores(cc: str) -> bool:
    major, _, minor = cc.partition(".")
    return int(major) * 10 + int(minor or 0) >= 70


def _gpu_from_row(row: dict[str, Any], arch_facts: dict[str, dict[str, Any]], gfx_facts: dict[str, dict[str, Any]]) -> Gpu:
    cc = str(row.get("cc", "") or "")
    gfx = str(row.get("gfx", "") or "")
    facts = arch_facts.get(cc, {}) if cc else {}
    tensor = row.get("tensor_cores")
    return Gpu(
        name=row["name"],
        vendor=row.get("vendor", "nvidia"),
        family=row.get("family", "") or facts.get("family", ""),
        cc=cc,
        gfx=gfx,
        memory_gb=row.get("memory_gb"),
        segment=row.get("segment", ""),
        tensor_cores=tensor if tensor is not None else (_default_tensor_cores(cc) if cc else None),
        smem_per_block=facts.get("smem_per_block"),
        hsa_override=gfx_facts.get(gfx, {}).get("hsa_override", "") if gfx else "",
    )
