"""Local inputs: the data files and model folders a run reads before its first step, checked on this machine.

:func:`check_local_paths` (every missing file named), :func:`check_data_columns` (the columns verl's dataset and
our scorer read), :func:`example_data_in` / :func:`check_example_data` (``verl-focal prep-data example`` output
never reaches a real launch unless ``VERL_FOCAL_ALLOW_EXAMPLE_DATA=1``).  No verl import.
"""

from __future__ import annotations

from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.config.key_names import config_get

__all__ = ["check_local_paths", "looks_like_hub_name", "check_data_columns", "example_data_in", "check_example_data",
           "ALLOW_EXAMPLE_ENV"]

def _local_paths(config: Any) -> list[tuple[str, str, str]]:
    """(key, path, kind) of the local files and folders a run reads before its first step."""
    def get(key: str) -> Any:
        return config_get(config, key)

    out: list[tuple[str, str, str]] = []
    for key in ("data.train_files", "data.val_files"):
        val = get(key)
        files = [val] if isinstance(val, str) else list(val or [])
        for i, f in enumerate(files):
            out.append((key if isinstance(val, str) else f"{key}[{i}]", str(f), "data"))
    out.append(("actor_rollout_ref.model.path", get("actor_rollout_ref.model.path"), "model"))
    tok = get("actor_rollout_ref.model.tokenizer_path")
    if tok:
        out.append(("actor_rollout_ref.model.tokenizer_path", tok, "model"))
    if get("critic.enable"):
        out.append(("critic.model.path", get("critic.model.path"), "model"))
    return [(k, str(p), kind) for k, p, kind in out if p]


def looks_like_hub_name(name: str) -> bool:
    """``org/name`` (a Hugging Face hub id) rather than a path: one slash, no leading ``/ . ~``.

    >>> looks_like_hub_name("Qwen/Qwen2.5-7B"), looks_like_hub_name("/models/Qwen2.5-7B"), looks_like_hub_name("a/b/c")
    (True, False, False)
    """
    import re

    return bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", name)) and not name.startswith((".", "~"))


def check_local_paths(config: Any) -> None:
    """Refuse, in one line, data files and model folders that do not exist on this machine or cannot be loaded.

    Every missing data file is named (a list of files: how many of how many, then all of them).  A local model
    folder needs ``config.json`` and a tokenizer that ``AutoTokenizer`` can load: ``tokenizer.json``, or the vocab
    files of a slow tokenizer (``tokenizer.model``, ``vocab.json``, ``vocab.txt``, ...); without
    ``actor_rollout_ref.model.tokenizer_path`` the tokenizer is read from the model folder.  Remote locations
    (``hdfs://``, ``s3://``, ...) are not checked, nor model names that look like hub ids (``Qwen/Qwen2.5-7B``)
    and are not a local path: the check runs offline.
    """
    import os


    # a tokenizer folder holds tokenizer.json (fast) or the vocab files a slow tokenizer reads (AutoTokenizer
    # fails on a folder with only tokenizer_config.json)
    tokenizer_files = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model",
                       "sentencepiece.bpe.model", "tokenizer.tiktoken", "qwen.tiktoken")
    own_tokenizer = not config_get(config, "actor_rollout_ref.model.tokenizer_path")

    def model_problem(key: str, local: str) -> str | None:
        if not os.path.isdir(local):  # e.g. <dir>/model.safetensors: name the folder, if it is one
            folder = os.path.dirname(os.path.abspath(local))
            if os.path.isfile(os.path.join(folder, "config.json")):
                return f"a file, not a model folder: give its folder, {key}={folder}"
            return "a file, not a model folder"
        lacks = [] if os.path.isfile(os.path.join(local, "config.json")) or key.endswith("tokenizer_path") else [
            "config.json"]
        needs_tokenizer = key.endswith("tokenizer_path") or (key == "actor_rollout_ref.model.path" and own_tokenizer)
        if needs_tokenizer and not any(os.path.isfile(os.path.join(local, f)) for f in tokenizer_files):
            lacks.append("tokenizer files (tokenizer.json, or the vocab files of a slow tokenizer such as "
                         "tokenizer.model or vocab.json + merges.txt)")
        return f"the folder has no {' and no '.join(lacks)}" if lacks else None

    missing: list[str] = []
    lists: dict[str, list[tuple[str, str]]] = {}  # data.val_files -> (path, why) of its missing entries
    counts: dict[str, int] = {}
    bad_model = False
    for key, path, kind in _local_paths(config):
        if "://" in path:
            continue
        local = os.path.expanduser(path)
        base = key.split("[", 1)[0]
        counts[base] = counts.get(base, 0) + 1
        if kind == "model":
            if not os.path.exists(local):
                if not looks_like_hub_name(path):
                    missing.append(f"{key}={path} (no such folder, and not a hub name like Qwen/Qwen2.5-7B)")
                continue
            problem = model_problem(key, local)
            if problem:
                missing.append(f"{key}={path}: {problem}")
                bad_model = True
        elif not os.path.isfile(local):
            why = "a folder, not a file" if os.path.isdir(local) else "no such file"
            if "[" in key:
                lists.setdefault(base, []).append((path, why))
            else:
                missing.append(f"{key}={path} ({why})")
    for base, items in lists.items():  # a list of files: how many are missing, and every one of them
        whys = {why for _, why in items}
        named = ", ".join(p if len(whys) == 1 else f"{p} ({why})" for p, why in items)
        tail = f" ({next(iter(whys))})" if len(whys) == 1 else ""
        head = "" if len(items) == 1 else f"{len(items)} of {counts[base]} missing: "
        missing.append(f"{base}: {head}{named}{tail}")
    if missing:
        fixes = []
        if any(m.startswith("data.") for m in missing):
            fixes.append("make the data with `verl-focal prep-data deepscaler|math-subset|eval` (docs/recipes.md), or "
                         "for a dry run without real data `verl-focal prep-data example --out-dir DIR` (recipes: "
                         "DATA_DIR=DIR), or point data.* at existing files")
        if bad_model:
            fixes.append("a model folder needs config.json and its tokenizer (save both with save_pretrained), or "
                         "give a hub name like Qwen/Qwen2.5-7B")
        elif any(not m.startswith("data.") for m in missing):
            fixes.append("give an existing model folder or a hub name")
        raise ConfigError(f"missing local input: {'; '.join(missing)}; {'; and '.join(fixes)}")


#: set to 1 to launch a run on ``verl-focal prep-data example`` output (it teaches nothing)
ALLOW_EXAMPLE_ENV = "VERL_FOCAL_ALLOW_EXAMPLE_DATA"


def example_data_in(config: Any) -> list[str]:
    """The data files of ``config`` that ``verl-focal prep-data example`` wrote (marked in their ``.stats.json``)."""
    import json
    import os

    from verl_focal.data.example import EXAMPLE_MARK

    out = []
    for _, path, kind in _local_paths(config):
        if kind != "data" or "://" in path:
            continue
        try:
            with open(os.path.expanduser(path) + ".stats.json", encoding="utf-8") as fh:
                if json.load(fh).get("source") == EXAMPLE_MARK:
                    out.append(path)
        except (OSError, ValueError, AttributeError):
            continue
    return out


def check_example_data(config: Any, launch: bool) -> list[str]:
    """A real launch (``launch``) on example data is refused unless :data:`ALLOW_EXAMPLE_ENV` is 1; a dry run gets
    a warning that says what the launch would do.  Returns the warning lines."""
    import os

    found = example_data_in(config)
    if not found:
        return []
    allowed = os.environ.get(ALLOW_EXAMPLE_ENV, "") == "1"
    what = (f"{len(found)} data file(s) come from `verl-focal prep-data example` (integer arithmetic that teaches "
            f"nothing), e.g. {found[0]}")
    if launch and not allowed:
        raise ConfigError(f"{what}; a real run on them is refused: make the real data with `verl-focal prep-data "
                          f"deepscaler|math-subset|eval` (docs/recipes.md), or set {ALLOW_EXAMPLE_ENV}=1 to train "
                          "on the example set anyway")
    if launch:
        return [f"{what}; training on them because {ALLOW_EXAMPLE_ENV}=1"]
    return [f"{what}; a real launch refuses them unless {ALLOW_EXAMPLE_ENV}=1"]


#: the data formats verl's RLHFDataset reads, by file name ending (verl/utils/dataset/rl_dataset.py: parquet through
#: ``datasets.load_dataset("parquet")``, .json/.jsonl through ``load_dataset("json")``, anything else a ValueError)
DATA_FORMATS = {".parquet": "parquet", ".json": "json", ".jsonl": "json"}
PARQUET_MAGIC = b"PAR1"


def _data_columns(key: str, path: str, local: str) -> set[str]:
    """The columns of one data file, read as verl will read it (by its name's ending); a file that is not what its
    name says, or a format verl does not read, is refused naming the file."""
    import json
    import os

    ending = os.path.splitext(local)[1].lower()
    fmt = DATA_FORMATS.get(ending)
    if fmt is None:
        raise ConfigError(f"{key}={path}: verl reads data files ending in {', '.join(DATA_FORMATS)} (by the name; "
                          f"{ending or 'no ending'} is refused when the dataset loads): convert it, or rename it if "
                          "it is one of those")
    with open(local, "rb") as fh:
        head = fh.read(4)
    if fmt == "parquet":
        if head != PARQUET_MAGIC:
            raise ConfigError(f"{key}={path}: not a parquet file (it does not start with PAR1), and verl reads a "
                              ".parquet as parquet: give the parquet file, or name a JSON file .jsonl")
        import pyarrow.parquet as pq

        try:
            return set(pq.read_schema(local).names)
        except Exception as e:  # noqa: BLE001 - pyarrow's own error on a damaged file
            raise ConfigError(f"{key}={path}: not a readable parquet file ({str(e).splitlines()[0]})") from None
    if head == PARQUET_MAGIC:
        raise ConfigError(f"{key}={path}: a parquet file named {ending}, and verl reads {ending} as JSON: rename it "
                          f"to {os.path.splitext(path)[0]}.parquet")
    try:
        with open(local, encoding="utf-8") as fh:
            text = fh.read(1 << 20)
            first = next((ln for ln in text.splitlines() if ln.strip()), "")
            if first.lstrip().startswith("["):  # one JSON array of records: read whole
                record = (json.loads(text + fh.read()) or [{}])[0]
            else:  # JSON lines
                record = json.loads(first) if first else {}
    except (UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{key}={path}: not JSON lines ({str(e).splitlines()[0]}), and verl reads {ending} as "
                          "JSON: give one JSON record a line") from None
    if not isinstance(record, dict):
        raise ConfigError(f"{key}={path}: its records are {type(record).__name__}s, not JSON objects with columns")
    return set(record)


def check_data_columns(config: Any) -> None:
    """Each local training and validation file is what its name says, in a format verl reads (parquet, JSON), and has
    the columns verl's dataset and the reward read: the prompt (``data.prompt_key``), ``data_source`` and
    ``reward_model`` (its ``ground_truth``).  Reads the schema, or a JSON file's first record."""
    import os

    prompt_key = str(config_get(config, "data.prompt_key", "prompt") or "prompt")
    for key, path, kind in _local_paths(config):
        local = os.path.expanduser(path)
        if kind != "data" or "://" in path or not os.path.isfile(local):
            continue
        names = _data_columns(key, path, local)
        lacks = [c for c in (prompt_key, "data_source", "reward_model") if c not in names]
        if lacks:
            raise ConfigError(
                f"{key}={path}: missing column(s) {lacks} (it has {sorted(names)[:8]}); verl's dataset reads the "
                f"prompt from data.prompt_key={prompt_key} and the reward reads data_source and "
                "reward_model.ground_truth: convert it with `verl-focal prep-data deepscaler --source FILE` "
                "(problem/answer records), or set data.prompt_key")
        if DATA_FORMATS[os.path.splitext(local)[1].lower()] == "parquet":
            _check_choice_truths(key, path, local)


def _check_choice_truths(key: str, path: str, local: str) -> None:
    """The answer keys of the multiple-choice rows (GPQA-Diamond's data source) must be option letters: the scorer
    refuses any other form, which would otherwise surface at the first validation, after the model has loaded.
    Reads the ``data_source`` column, and ``reward_model`` only when such rows exist."""
    import pyarrow.parquet as pq

    from verl_focal.grading.verify import choice_truth_problem
    from verl_focal.reward import MULTIPLE_CHOICE_SOURCES

    sources = pq.read_table(local, columns=["data_source"]).column("data_source").to_pylist()
    rows = [i for i, s in enumerate(sources) if s in MULTIPLE_CHOICE_SOURCES]
    if not rows:
        return
    models = pq.read_table(local, columns=["reward_model"]).column("reward_model").to_pylist()
    for i in rows:
        truth = (models[i] or {}).get("ground_truth") if isinstance(models[i], dict) else None
        problem = choice_truth_problem(truth)
        if problem:
            raise ConfigError(f"{key}={path}: row {i} ({sources[i]}): {problem}")
