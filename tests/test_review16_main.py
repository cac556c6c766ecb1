"""Session-16 fixes made outside the reviewers' own files (each reproduced before the fix)."""
from planner import export, load_preset


def _dsv3(mtp: int) -> dict:
    d = load_preset("deepseek-v3-h800-2048").to_json_dict()
    m = load_preset("deepseek-v3-h800-2048").resolved_model().model_dump(mode="json", exclude_none=True)
    m["mtp_layers"] = mtp
    d["model"] = m
    return d


def test_megatron_export_writes_mtp_num_layers():
    """Review 16b: the MTP depth reached the step time and memory but not the Megatron command
    (Megatron-LM's flag is --mtp-num-layers, docs/user-guide/features/multi_token_prediction.md)."""
    assert "--mtp-num-layers 1" in export.megatron_args(_dsv3(1)).text
    assert "--mtp-num-layers" not in export.megatron_args(_dsv3(0)).text


def test_torchtitan_export_says_mtp_is_not_written():
    """TorchTitan's DeepSeek-V3 has no MTP (its README's supported features): a note, not silence."""
    with_mtp = export.torchtitan_toml(_dsv3(1)).notes
    assert any("multi-token-prediction" in n and "not written" in n for n in with_mtp)
    assert not any("multi-token-prediction" in n for n in export.torchtitan_toml(_dsv3(0)).notes)
