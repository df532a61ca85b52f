"""Data files as a class: every format verl's dataset reads (verl/utils/dataset/rl_dataset.py reads ``.parquet`` as
parquet and ``.json``/``.jsonl`` as JSON, by the name, and raises on any other ending) is checked for being what its
name says and for the columns verl's dataset and the reward read (``data_columns``, dry run and launch)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from verl_focal.config.errors import ConfigError
from verl_focal.integration.startup.local_inputs import check_data_columns

ROW = {"prompt": [{"role": "user", "content": "1+1?"}], "data_source": "d", "reward_model": {"ground_truth": "2"}}


def _cfg(composed_config, path):
    return composed_config([f"data.train_files={path}", f"data.val_files={path}"])


def _write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


@pytest.mark.parametrize("name,content", [
    ("ok.jsonl", json.dumps(ROW) + "\n"),
    ("ok.json", json.dumps([ROW, ROW])),
    ("blank_first.jsonl", "\n" + json.dumps(ROW) + "\n"),
])
def test_json_files_with_verls_columns_pass(composed_config, tmp_path, name, content):
    check_data_columns(_cfg(composed_config, _write(tmp_path, name, content)))


def test_a_parquet_with_verls_columns_passes(composed_config, tmp_path):
    path = tmp_path / "ok.parquet"
    pd.DataFrame([ROW]).to_parquet(path)
    check_data_columns(_cfg(composed_config, path))


@pytest.mark.parametrize("name,content,needle", [
    # the same content as a parquet without `prompt`: refused for both formats alike
    ("noprompt.jsonl", json.dumps({k: v for k, v in ROW.items() if k != "prompt"}) + "\n",
     "missing column(s) ['prompt']"),
    ("noprompt.json", json.dumps([{"question": "q", "data_source": "d", "reward_model": {}}]),
     "missing column(s) ['prompt']"),
    ("parquet_inside.jsonl", None, "a parquet file named .jsonl, and verl reads .jsonl as JSON: rename it to"),
    ("text.parquet", "prompt,data_source\nq,d\n", "not a parquet file"),
    ("notjson.jsonl", "prompt,data_source\nq,d\n", "not JSON lines"),
    ("list_rows.jsonl", "[1, 2]\n", "its records are ints"),
    ("data.csv", "prompt,data_source,reward_model\n", "verl reads data files ending in .parquet, .json, .jsonl"),
])
def test_a_data_file_that_is_not_what_verl_reads_is_refused_naming_it(composed_config, tmp_path, name, content,
                                                                        needle):
    if content is None:  # a real parquet, named .jsonl
        path = tmp_path / name
        pd.DataFrame([ROW]).to_parquet(path)
    else:
        path = _write(tmp_path, name, content)
    with pytest.raises(ConfigError) as e:
        check_data_columns(_cfg(composed_config, path))
    assert needle in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value), str(e.value)
