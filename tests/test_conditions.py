"""The `when` language: three-valued, whitelisted, with the domain helpers entries rely on."""

import pytest

from cudalogs.conditions import UNKNOWN, ConditionError, archs, evaluate, implied_arch, names, ver

T4 = {"arch": 75, "vendor": "nvidia", "family": "turing"}


@pytest.mark.parametrize(
    ("condition", "env", "expected"),
    [
        ("arch < 80", T4, True),
        ("arch >= 80", T4, False),
        ("arch < 80", {}, UNKNOWN),
        ("arch < 80 and vendor == 'amd'", {"vendor": "amd"}, UNKNOWN),
        ("arch < 80 and vendor == 'nvidia'", {"vendor": "amd"}, False),
        ("arch < 80 or vendor == 'amd'", {"vendor": "amd"}, True),
        ("not arch < 80", {}, UNKNOWN),
        ("family in ['volta', 'turing']", T4, True),
        ("arch not in archs(compiled)", {"arch": 61, "compiled": "500,600,700,750,800,900"}, True),
        ("known(arch)", {}, False),
        ("ver(torch) >= ver('2.7')", {"torch": "2.7.1+cu128"}, True),
        ("", {}, True),
    ],
)
def test_evaluate(condition, env, expected):
    assert evaluate(condition, env) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("500,520,610", [50, 52, 61]),
        ("sm_50 sm_60 sm_86 sm_90", [50, 60, 86, 90]),
        ("7.5;8.0+PTX", [75, 80]),
        ("compute_89", [89]),
        ("sm_120", [120]),
        ("1200", [120]),
    ],
)
def test_archs_reads_every_notation(text, expected):
    assert archs(text) == expected


def test_implied_arch_is_unique_only_when_one_real_arch_fits():
    compiled = archs("500,520,530,600,610,620,700,720,750,800,860,870,890,900")
    assert implied_arch(70, compiled) == 70  # V100: 7.0 is the only arch in [70, 72)
    assert implied_arch(60, archs("500,600,700,800,900")) is UNKNOWN  # 6.0, 6.1 or 6.2


def test_conditions_cannot_run_code():
    with pytest.raises(ConditionError):
        evaluate("__import__('os').system('true')", {})
    with pytest.raises(ConditionError):
        evaluate("arch.real", {"arch": 1})


def test_names_lists_variables_not_functions():
    assert names("arch in archs(compiled) and known(gfx)") == {"arch", "compiled", "gfx"}


def test_ver_orders_versions():
    assert ver("0.6.3.post1") > ver("0.6.3") > ver("0.5")
