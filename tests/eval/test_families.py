"""The families file of `eval frontier` (verl_focal.lab.eval.families): what it accepts, and each refusal in one line
naming the file and the entry."""

import pytest

from verl_focal.config.errors import InputError
from verl_focal.lab.eval.families import ALL_SEEDS, load_families, parse_families


def _doc(**over):
    doc = {"reference": {"name": "GRPO", "seeds": {1: "g1", 2: "g2"}},
           "controls": [{"family": "lower lr", "knob": "lr",
                         "points": [{"value": 5e-7, "seeds": {1: "l1", 2: "l2"}}, {"value": "0", "run": "base"}]}],
           "methods": [{"name": "F", "seeds": {1: "f1", 2: "f2"}},
                       {"family": "Cue", "knob": "α", "points": [{"value": 0.8, "seeds": {1: "c1", 2: "c2"}}]}]}
    doc.update(over)
    return doc


def test_a_design_is_read_with_names_seeds_and_shared_runs():
    f = parse_families(_doc(), "f.yaml")
    assert f.seeds == [1, 2] and f.reference.run_at(2) == "g2"
    lr = f.controls[0]
    assert [p.name for p in lr.points] == ["lower lr lr=5e-07", "lower lr lr=0"]
    assert lr.points[1].untrained and lr.points[1].run_at(2) == "base" and lr.points[1].runs == {ALL_SEEDS: "base"}
    assert [(m.name, m.control, [p.name for p in m.points]) for m in f.methods] == [
        ("F", False, ["F"]), ("Cue", False, ["Cue α=0.8"])]
    assert f.runs() == ["g1", "g2", "l1", "l2", "base", "f1", "f2", "c1", "c2"]
    one = parse_families(_doc(reference={"run": "g"}, methods=[{"name": "F", "run": "f"}],
                              controls=[{"family": "lr", "points": [{"value": 1, "run": "l"}]}]))
    assert one.seeds == [ALL_SEEDS] and one.methods[0].points[0].run_at(ALL_SEEDS) == "f"


@pytest.mark.parametrize("over,needle", [
    ({"controls": [{"family": "lr", "points": [{"seeds": {1: "a", 2: "b"}}]}]},
     "controls[0] 'lr' point 1: needs the knob's 'value'"),
    ({"methods": [{"name": "F", "run": "f"}]},
     "method 'F' gives one run for every seed, but the reference has seeds [1, 2]; a trained method needs one run"),
    ({"methods": [{"name": "lower lr lr=0", "seeds": {1: "x", 2: "y"}}]},
     "the name 'lower lr lr=0' is used twice (control 'lower lr' point lr=0 and method 'lower lr lr=0')"),
    ({"methods": [{"name": "F", "seeds": {1: "f1", 2: "f2"}, "run": "f"}]}, "methods[0] 'F': give either 'seeds'"),
    ({"methods": [{"name": "F", "seeds": {"one": "f1"}}]}, "methods[0] 'F': seeds: 'one' is not an integer"),
    ({"methods": [{"nmae": "F", "seeds": {1: "f1"}}]}, "methods[0]: unknown key 'nmae' (did you mean 'name'?)"),
    ({"methods": []}, "'methods' must list at least one method"),
    ({"controls": [{"family": "lr", "knob": "lr", "points": [{"value": 1, "seeds": {1: "a", 3: "b"}}]}]},
     "control 'lr' point lr=1 has seeds [1, 3], the reference 'GRPO' has [1, 2]"),
])
def test_refusals_name_the_entry(over, needle):
    with pytest.raises(InputError) as e:
        parse_families(_doc(**over), "f.yaml")
    assert str(e.value).startswith("f.yaml: ") and needle in str(e.value) and "\n" not in str(e.value)


def test_the_file_itself(tmp_path):
    with pytest.raises(InputError, match="--families .*nope.yaml: no such file"):
        load_families(tmp_path / "nope.yaml")
    (tmp_path / "bad.yaml").write_text("reference: [a\n")
    with pytest.raises(InputError, match=r"bad.yaml: not YAML \(line 2\)"):
        load_families(tmp_path / "bad.yaml")
    (tmp_path / "noref.yaml").write_text("controls: []\n")
    with pytest.raises(InputError, match="noref.yaml: no 'reference'"):
        load_families(tmp_path / "noref.yaml")


@pytest.mark.parametrize("over,needle", [
    # a method on a control point's runs: D = 0 by construction
    ({"methods": [{"name": "F", "seeds": {1: "l1", 2: "f2"}}]},
     "run 'l1' is used by two points, control 'lower lr' point lr=5e-07 and method 'F'"),
    # a method on the reference's runs
    ({"methods": [{"name": "F", "seeds": {1: "g1", 2: "g2"}}]},
     "run 'g1' is used by two points, the reference and method 'F'"),
    # two control points of different policies sharing a run
    ({"controls": [{"family": "lower lr", "knob": "lr", "points": [{"value": 5e-7, "seeds": {1: "l1", 2: "l2"}}]},
                   {"family": "KL", "knob": "kl", "points": [{"value": 1, "seeds": {1: "k1", 2: "l2"}}]}]},
     "run 'l2' is used by two points, control 'lower lr' point lr=5e-07 and control 'KL' point kl=1"),
    # a control point on the reference's runs would sit at (0, 0)
    ({"controls": [{"family": "lower lr", "knob": "lr", "points": [{"value": 5e-7, "seeds": {1: "g1", 2: "g2"}}]}]},
     "run 'g1' is used by two points, the reference and control 'lower lr' point lr=5e-07"),
    ({"controls": [{"family": "lr", "trained": "no", "points": [{"value": 1, "run": "b"}]}]},
     "controls[0] 'lr': trained: 'no' must be true or false"),
])
def test_a_run_used_by_two_points_is_refused_naming_both(over, needle):
    with pytest.raises(InputError) as e:
        parse_families(_doc(**over), "f.yaml")
    assert str(e.value).startswith("f.yaml: ") and needle in str(e.value) and "\n" not in str(e.value)


def test_the_base_model_may_end_two_control_families_and_a_family_may_be_made_without_training():
    f = parse_families(_doc(controls=[
        {"family": "lower lr", "knob": "lr", "points": [{"value": 5e-7, "seeds": {1: "l1", 2: "l2"}},
                                                        {"value": 0, "run": "base"}]},
        {"family": "weight interpolation", "knob": "λ", "trained": False,
         "points": [{"value": 0.5, "seeds": {1: "w1", 2: "w2"}}, {"value": 0, "run": "base"}]}]))
    wise = f.controls[1]
    assert [p.trained for p in wise.points] == [False, False] and f.controls[0].points[0].trained
    assert f.runs().count("base") == 1
