"""IFEval scoring: prompt-level strict correctness, offline tokenizers, malformed ground truth."""

from __future__ import annotations

import json

import pytest

from verl_focal.ood import ifeval as I


def gt(ids, kwargs, prompt="Write something."):
    return json.dumps({"instruction_id_list": ids, "kwargs": kwargs, "prompt": prompt})


LOWER_AND_NO_COMMA = gt(["change_case:english_lowercase", "punctuation:no_comma"], [{}, {}])


def test_all_instructions_followed_scores_one():
    acc, pred = I.score("all lower case and no commas here.", LOWER_AND_NO_COMMA)
    assert (acc, pred) == (1.0, "strict 2/2")


def test_one_instruction_missed_scores_zero_prompt_level():
    # lowercase followed, comma present: instruction level 1/2, prompt level 0
    acc, pred = I.score("lower case, but with a comma.", LOWER_AND_NO_COMMA)
    assert (acc, pred) == (0.0, "strict 1/2")


def test_loose_differs_from_strict_and_is_not_the_score():
    # a title is required; the strict text has a markdown-bolded first line that loose strips
    g = gt(["detectable_format:title"], [{}])
    res = I.evaluate("**Intro**\nSome text without a title", g)
    assert res.strict == (False,) and not res.prompt_strict
    g2 = gt(["punctuation:no_comma"], [{}])
    res2 = I.evaluate("Sure, here it is:\nno commas in the body", g2)
    assert res2.strict == (False,) and res2.loose == (True,)  # loose drops the first line
    assert I.score("Sure, here it is:\nno commas in the body", g2)[0] == 0.0


def test_kwargs_are_used_word_count():
    g = gt(["length_constraints:number_words"], [{"num_words": 5, "relation": "at least"}])
    assert I.score("one two three four five", g)[0] == 1.0
    assert I.score("one two three four", g)[0] == 0.0


def test_null_kwargs_are_dropped():
    g = gt(["length_constraints:number_words"], [{"num_words": 3, "relation": "less than", "language": None}])
    assert I.score("just two", g)[0] == 1.0


def test_thinking_is_not_graded_and_unclosed_think_scores_zero():
    g = gt(["punctuation:no_comma"], [{}])
    assert I.score("<think>a, b, c</think>\n\nno commas at all", g)[0] == 1.0
    assert I.score("<think>no commas yet but never closed", g)[0] == 0.0
    assert I.score("", g)[0] == 0.0


def test_sentence_count_uses_packaged_punkt_no_download(monkeypatch, tmp_path):
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])  # no nltk data anywhere
    g = gt(["length_constraints:number_sentences"], [{"num_sentences": 3, "relation": "less than"}])
    # "Dr." and "p.m." are English Punkt abbreviations: two sentences, not four
    assert I.score("Dr. Smith left at 5 p.m. today. He came back.", g)[0] == 1.0
    assert I.score("One. Two. Three.", g)[0] == 0.0
    assert I.english_sentence_tokenizer().tokenize("Dr. Smith left. He came back.") == [
        "Dr. Smith left.", "He came back."]


def test_capital_word_frequency_uses_offline_word_tokenizer(monkeypatch, tmp_path):
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    g = gt(["change_case:capital_word_frequency"], [{"capital_frequency": 2, "capital_relation": "at least"}])
    assert I.score("THIS is VERY loud.", g)[0] == 1.0
    assert I.score("Only ONE shout.", g)[0] == 0.0
    assert I.word_tokenize("It isn't. Ok.") == ["It", "is", "n't", ".", "Ok", "."]


def test_language_detection_is_deterministic():
    g = gt(["language:response_language"], [{"language": "de"}])
    text = "Das ist ein kurzer deutscher Satz über das Wetter und die Berge."
    assert {I.score(text, g)[0] for _ in range(5)} == {1.0}
    assert I.score("This sentence is plainly written in English.", g)[0] == 0.0


def test_prompt_dependent_checker_gets_the_prompt():
    prompt = "Repeat this request first."
    g = gt(["combination:repeat_prompt"], [{"prompt_to_repeat": prompt}], prompt=prompt)
    assert I.score(prompt + " Then the answer.", g)[0] == 1.0
    assert I.score("The answer only.", g)[0] == 0.0


@pytest.mark.parametrize("bad, msg", [
    ("not json", "not JSON"),
    (json.dumps([1, 2]), "JSON object"),
    (json.dumps({"instruction_id_list": []}), "non-empty"),
    (json.dumps({"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}, {}]}), "1 instructions but 2 kwargs"),
    (json.dumps({"instruction_id_list": ["punctuation:no_comas"], "kwargs": [{}]}), "unknown IFEval instruction"),
    (json.dumps({"instruction_id_list": ["punctuation:no_comma"], "kwargs": ["x"]}), "must be objects"),
])
def test_malformed_ground_truth_is_a_clear_error(bad, msg):
    with pytest.raises(I.IFEvalGroundTruthError, match=msg):
        I.score("text", bad)


def test_adversarial_huge_response_is_capped():
    g = gt(["punctuation:no_comma"], [{}])
    text = "a " * (I.MAX_RESPONSE_CHARS // 2) + ", tail"
    assert len(I.graded_text(text)) == I.MAX_RESPONSE_CHARS
    assert I.score(text, g)[0] == 1.0  # the comma lies past the cap


def test_dict_ground_truth_accepted():
    assert I.score("fine", {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]})[0] == 1.0
