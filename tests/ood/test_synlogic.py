"""SynLogic verifiers: for every task, a correct, a wrong, a malformed and an adversarial answer
built by hand (values worked out in the comments), plus the ground-truth plumbing."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from verl_focal.ood import synlogic as S
from verl_focal.ood.synlogic._common import ArithmeticError_, answer_text, arith_value


def _sudoku():
    # the classic shifted pattern is a valid sudoku: rows shift by 3, bands by 1
    return [[(r * 3 + r // 3 + c) % 9 + 1 for c in range(9)] for r in range(9)]


SUDOKU = _sudoku()
SUDOKU_GIVEN = [[v if (r + c) % 3 == 0 else 0 for c, v in enumerate(row)] for r, row in enumerate(SUDOKU)]
SUDOKU_SWAPPED_ROW = [row[:] for row in SUDOKU]
SUDOKU_SWAPPED_ROW[0][0], SUDOKU_SWAPPED_ROW[0][1] = SUDOKU_SWAPPED_ROW[0][1], SUDOKU_SWAPPED_ROW[0][0]
# relabelling digits 1<->2 keeps every unit valid but breaks the givens
SUDOKU_RELABELLED = [[{1: 2, 2: 1}.get(v, v) for v in row] for row in SUDOKU]

# task, answer, metadata, correct, wrong, malformed, adversarial (all must score 0 except correct)
CASES = [
    ("object_counting", "7", {}, "Counting all: \\boxed{7}", "\\boxed{8}", "the answer is 7",
     "\\boxed{7} wait, recount: \\boxed{6}"),
    ("object_properties", "3", {}, "<think>hmm</think>So \\boxed{3}.", "\\boxed{4}", "\\boxed{three}",
     "\\boxed{3.5}"),
    ("space_reasoning", "left", {}, "\\boxed{Left}", "\\boxed{right}", "\\boxed{left",
     "\\boxed{left or right}"),
    ("space_reasoning_tree", "A, C", {}, "\\boxed{C,A}", "\\boxed{A}", "A, C", "\\boxed{A,B,C}"),
    ("word_sorting", "apple, banana, cherry", {}, "\\boxed{apple, banana, cherry}",
     "\\boxed{banana, apple, cherry}", "apple banana cherry", "\\boxed{apple, banana, cherry, apple}"),
    ("word_sorting_mistake", "3", {}, "\\boxed{3}", "\\boxed{4}", "step 3", "\\boxed{3 or No}"),
    ("boolean_expressions", "A,C", {}, "\\boxed{\\text{A}, \\text{C}}", "\\boxed{A}", "A and C",
     "\\boxed{A,B,C,D}"),
    ("operation", "\\frac{1}{2}", {}, "\\boxed{0.5}", "\\boxed{2}", "no idea", "\\boxed{}"),
    ("game_of_24", None, {"numbers": [4, 7, 8, 8], "operators": ["+", "-", "*", "/"], "result": 24},
     "```python\n(7 - 8 / 8) * 4\n```",            # (7-1)*4 = 24
     "```python\n4 + 7 + 8 + 8\n```",               # right numbers, value 27
     "```python\nprint(24)\n```",                   # a call is not arithmetic
     "```python\n__import__('os').system('true')\n```"),
    ("mathador", None, {"numbers": [2, 3, 5], "operators": ["+", "*"], "result": 25},
     "```python\n(2 + 3) * 5\n```", "```python\n2 * 3 + 5\n```", "```python\n(2 + 3) * 5 =\n```",
     "```python\n(2 + 3) * 5 * 1\n```"),             # 25, but 1 is not a given number
    ("minesweeper", None, {"current_mines": [[0, 1], [2, 3]]}, "Mines: [(2, 3), (0, 1)]", "[(0, 1)]",
     "mines at 0,1 and 2,3", "[(0, 1), (2, 3), (1, 1)]"),
    ("time_sequence", None, {"records": {"answers": {"answer_maxLen": 30, "answer_nums": 2}}},
     "The answer is [30, 2]", "[30, 3]", "[30, two]", "[30, 2, 5]"),
    ("dyck_language", None, {"full_sequence": "([])({})"}, "<think>x</think><answer>([])({})</answer>",
     "([])({)}", "", "Sure! ([])({})"),
    ("dyck_language_errors", None, {"is_valid": False, "first_error_pos": 5}, "5", "4", "five", "5 or 6"),
    ("kukurasu", None, {"n": 2, "m": 2, "row_sums": [1, 2], "col_sums": [1, 2]},
     '[["1","X"],["X","1"]]',                       # rows 1, 2; columns 1, 2
     '[["X","1"],["1","X"]]',                       # rows 2, 1
     "[[1, 0], [0, 1]]", '[["1","X"],["X","1"],["X","X"]]'),
    ("cipher", "[[HELLO]]", {}, '```python\n[["HELLO"]]\n```', '```python\n[["HELLP"]]\n```',
     "```python\n[[HELLO]]\n```", "```python\n__import__('os')\n```"),
    ("math_path", None, {"query_expr": "? + 3 * ? = 17"}, "[[5+3*4=17]]",
     "[[4+3*4=17]]",                                # 16 != 17
     "5+3*4=17", "[[5*3+2=17]]"),                   # holds, but the operators moved
    ("numbrix", None, {"grid": [[1, "X"], ["X", "X"]]}, "[[1, 2], [4, 3]]",
     "[[1, 3], [2, 4]]",                            # 2 and 3 are diagonal
     "[[1, 2], [4]]", "[[2, 1], [3, 4]]"),          # a valid path that moves the given 1
    ("sudoku", None, {"original_sudoku": SUDOKU_GIVEN}, f"```python\n{SUDOKU}\n```",
     f"```python\n{SUDOKU_SWAPPED_ROW}\n```", f"```python\n{SUDOKU[:8]}\n```",
     f"```python\n{SUDOKU_RELABELLED}\n```"),
    ("cryptarithm", "12+34=46", {}, "So the answer is 12 + 34 = 46.", "12+34=47", "no equation here",
     "12+34=46, or rather 13+34=47"),
    ("web_of_lies", "yes, no, yes", {}, "The answer is: **yes, no, yes**", "**yes, yes, yes**", "",
     "**yes, not sure, yes**"),
    ("survo", None, {"original_matrix": [[0, 2, 5], [1, 0, 4], [4, 0, 9]], "candidate_numbers": [3, 3, 5]},
     "```python\n[[3, 2, 5], [1, 3, 4], [4, 5, 9]]\n```",   # 3+2=5, 1+3=4; 3+1=4, 2+3=5
     "```python\n[[3, 2, 5], [1, 5, 4], [4, 3, 9]]\n```",   # 1+5 != 4
     "[[3, 2, 5], [1, 3]]", "```python\n[[3.0, 2, 5], [1, 3, 4], [4, 5, 9]]\n```"),
    ("arrow_maze", None, {"maze": [["2", "X", "X"]]},
     '```python\n[["2", "→", "→"]]\n```',          # the ray right of 2 has length 2
     '[["2", "→", "←"]]',                           # ray length 1
     '[["2", "→"]]', '[["2", "→", "X"]]'),          # a blank left blank
    ("buggy_tables", "12.50", {}, "The mean is 12.50.", "12.51", "12.5", "12.50, no wait: 13.00"),
    ("calcudoko", None, {"grid_size": 2, "regions": [{"cells": ["(1,1)", "(1,2)"], "target": 3, "operator": "+"},
                                                     {"cells": ["(2,1)", "(2,2)"], "target": 2, "operator": "*"}]},
     "[[1 2, 2 1]]", "[[1 2, 1 2]]", "[[1 2, 2]]",   # a short row is not padded
     "[[3 0, 0 3]]"),                               # cages hold, but not a Latin square
    ("campsite", None, {"grid": [["T", "0", "0"], ["0", "0", "T"]], "row_constraints": [1, 1],
                        "col_constraints": [1, 0, 1], "n": 2, "m": 3},
     '[["T", "0", "C"], ["C", "0", "T"]]',
     '[["T", "C", "0"], ["0", "C", "T"]]',           # tents touch, column counts off
     '[["T", "0"], ["C", "0"]]', '[["0", "0", "C"], ["C", "T", "T"]]'),  # trees moved
    ("dyck_language_reasoning_errors", None, {"error_indices": [3, 7]}, "3, 7", "3", "Thoughts 3 and 7",
     "unclear, maybe 3,7"),
    ("futoshiki", None, {"grid_size": 3, "prefilled_coords": [[0, 0]], "constraints": [[[0, 1], [0, 2], "<"]],
                         "question": "Solve.\nCurrent puzzle:\n1 X X\nX X X\nX X X\n\nConstraints: (0,1) < (0,2)"},
     "[[1 2 3, 2 3 1, 3 1 2]]",
     "[[1 3 2, 2 1 3, 3 2 1]]",                     # Latin, given kept, but 3 < 2 fails
     "[[1 2 3, 2 3 1]]", "[[2 1 3, 3 2 1, 1 3 2]]"),  # the given 1 at (0,0) replaced
    ("goods_exchange", None, {"owns_after": "(('Alice','pen'),('Bob','cup'))"},
     '```python\n(("alice", "pen"), ("Bob", "Cup"))\n```', '```python\n(("Alice", "cup"), ("Bob", "pen"))\n```',
     "(('Alice','pen'),('Bob','cup'))",             # no code block
     '```python\n(("Alice", "pen"), ("Bob", "cup"), ("Alice", "cup"))\n```'),
    ("norinori", None, {"region_grid": [["a", "a", "a"], ["a", "a", "a"], ["b", "b", "b"]]},
     "[[(1, 1), (1, 2)], [(3, 2), (3, 3)]]",
     "[[(1, 1), (1, 2)], [(2, 2), (3, 2)]]",         # touching, region a gets 3
     "(1,1),(1,2)", "[[(1, 1), (1, 2)]]"),          # region b empty: the authors' check passes it
    ("number_wall", None, {"grid": [[2, "X"], ["X", "X"]], "n": 2},
     '[[2, "X"], ["A", "A"]]', '[[2, "X"], ["X", "A"]]',   # island of 3 holds a 2
     '[[2, "X"], ["A"]]', '[[2, "A"], ["A", "A"]]'),
    ("skyscraper_puzzle", None, {"n": 2, "top": [2, 1], "bottom": [1, 2], "left": [2, 1], "right": [1, 2]},
     "```python\n[[1, 2], [2, 1]]  # rows\n```", "```python\n[[2, 1], [1, 2]]\n```", "[[1, 2], [2, 1]]",
     "```python\n[[1, 2, 3], [2, 1, 3]]\n```"),
    ("star_placement_puzzle", None, {"n": 4, "k": 1, "region_grid": [["A", "A", "B", "B"], ["A", "A", "B", "B"],
                                                                     ["C", "C", "D", "D"], ["C", "C", "D", "D"]]},
     '```python\n{"A": [(1, 2)], "B": [(2, 4)], "C": [(3, 1)], "D": [(4, 3)]}\n```',
     '```python\n{"A": [(1, 2)], "B": [(2, 3)], "C": [(3, 1)], "D": [(4, 3)]}\n```',   # column 3 twice
     '{"A": [(1, 2)], "B": [(2, 4)], "C": [(3, 1)], "D": [(4, 3)]}',
     '```python\n{"A": [(1, 2)], "B": [(2, 4)], "C": [(3, 1)], "D": [(4, 3)], "E": [(0, 0)]}\n```'),
    ("wordscapes", None, {"grid": [["X", "X", "X"], ["0", "0", "X"]], "across_words": ["CAT"], "down_words": ["TO"]},
     '[["C", "A", "T"], ["", "", "O"]]', '[["C", "U", "T"], ["", "", "O"]]', '[["C", "A", "T"]]',
     '[["C", "A", "T"], ["X", "", "O"]]'),          # a letter in a blocked cell
    ("zebra_puzzle", '{"header": ["House", "Name"], "rows": [["1", "Alice"]]}', {},
     '```json\n{"header": ["House", "Name"], "rows": [["1", "Alice"]]}\n```',
     '```json\n{"header": ["House", "Name"], "rows": [["1", "Bob"]]}\n```', '```json\n{"header": \n```',
     '```json\n{"header": ["House", "Name"], "rows": [[1, "Alice"]]}\n```'),   # 1 is not "1"
]


def gt(task, answer, meta):
    return json.dumps({"task": task, "answer": answer, "metadata": meta})


def test_every_verified_task_has_cases():
    assert {c[0] for c in CASES} == set(S.TASK_MODULES)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_task_correct_wrong_malformed_adversarial(case):
    task, answer, meta, correct, wrong, malformed, adversarial = case
    g = gt(task, answer, meta)
    assert S.score(correct, g)[0] == 1.0, "correct answer rejected"
    assert S.score(wrong, g)[0] == 0.0, "wrong answer accepted"
    assert S.score(malformed, g)[0] == 0.0, "malformed answer accepted"
    assert S.score(adversarial, g)[0] == 0.0, "adversarial answer accepted"
    # an unfinished thought grades nothing, whatever it contains
    assert S.score("<think>" + correct.replace("</think>", ""), g) == (0.0, "")


def test_code_block_with_an_assignment_is_read():
    g = gt("sudoku", None, {"original_sudoku": SUDOKU_GIVEN})
    assert S.score(f"```python\nsolution = {SUDOKU}\n```", g)[0] == 1.0
    assert S.score(f"```python\nsolution == {SUDOKU}\n```", g)[0] == 0.0


def test_dyck_errors_valid_sequence_reads_minus_one():
    g = gt("dyck_language_errors", None, {"is_valid": True})
    assert S.score("-1", g)[0] == 1.0
    assert S.score("The sequence is valid", g)[0] == 1.0
    assert S.score("0", g)[0] == 0.0


def test_word_sorting_mistake_null_gold_means_no():
    g = gt("word_sorting_mistake", None, {})
    assert S.score("\\boxed{No}", g)[0] == 1.0
    assert S.score("\\boxed{2}", g)[0] == 0.0


def test_answer_tags_and_thinking():
    assert answer_text("<think>\\boxed{1}</think> text <answer>A</answer> tail <answer> B </answer>") == "B"
    assert answer_text("<think>never closed <answer>A</answer>") == ""
    assert answer_text("plain") == "plain"


def test_task_from_data_source_when_ground_truth_has_none():
    g = json.dumps({"answer": "7", "metadata": {}})
    assert S.score("\\boxed{7}", g, data_source="verl_focal/synlogic/object_counting")[0] == 1.0


@pytest.mark.parametrize("bad, msg", [
    ("{", "not JSON"),
    (json.dumps(["x"]), "JSON object"),
    (json.dumps({"answer": "1"}), "no 'task'"),
    (json.dumps({"task": "sudokuu", "metadata": {}}), "not a SynLogic task"),
    (json.dumps({"task": "sudoku", "metadata": {}}), r"lacks \['original_sudoku'\]"),
    (json.dumps({"task": "object_counting", "answer": "", "metadata": {}}), "gold answer is empty"),
    (json.dumps({"task": "sudoku", "metadata": "[1]"}), "must be an object"),
])
def test_bad_ground_truth_is_a_clear_error(bad, msg):
    with pytest.raises(S.SynLogicGroundTruthError, match=msg):
        S.score("x", bad)


def test_task_without_verifier_is_named(monkeypatch):
    monkeypatch.setattr(S, "TASKS_WITHOUT_VERIFIER", ("future_task",))
    with pytest.raises(S.SynLogicGroundTruthError, match="'future_task' has no verifier yet"):
        S.score("x", json.dumps({"task": "future_task", "metadata": {}}))


def test_futoshiki_needs_the_question():
    meta = {"grid_size": 1, "prefilled_coords": [], "constraints": []}
    with pytest.raises(S.SynLogicGroundTruthError, match="lacks the puzzle 'question'"):
        S.score("[[1]]", json.dumps({"task": "futoshiki", "metadata": meta}))
    assert S.score("[[1]]", json.dumps({"task": "futoshiki", "metadata": meta, "question": "q"}))[0] == 1.0


def test_calcudoko_division_and_difference_are_exact():
    regions = [{"cells": ["(1,1)", "(2,1)"], "target": 2, "operator": "/"},
               {"cells": [[1, 2], [2, 2]], "target": 1, "operator": "-"}]
    g = gt("calcudoko", None, {"grid_size": 2, "regions": regions})
    assert S.score("[[1 2, 2 1]]", g)[0] == 1.0   # 2/1 = 2, |2-1| = 1
    regions[0]["target"] = 3
    assert S.score("[[1 2, 2 1]]", gt("calcudoko", None, {"grid_size": 2, "regions": regions}))[0] == 0.0


def test_dyck_reasoning_errors_none():
    g = gt("dyck_language_reasoning_errors", None, {"error_indices": []})
    assert S.score("No errors.", g)[0] == 1.0
    assert S.score("4", g)[0] == 0.0


def test_task_lists_cover_synlogic_35_without_overlap():
    assert not set(S.TASK_MODULES) & set(S.TASKS_WITHOUT_VERIFIER)
    # the 35 task names of SynLogic's generators and verifiers (game_of_24 and mathador share one)
    assert len(set(S.TASK_MODULES) | set(S.TASKS_WITHOUT_VERIFIER)) == 35
    assert S.TASKS_WITHOUT_VERIFIER == ()


def test_arith_value_is_exact_and_restricted():
    assert arith_value("(7 - 8 / 8) * 4") == (Fraction(24), [7, 8, 8, 4])
    assert arith_value("1 / 3 + 1 / 3 + 1 / 3")[0] == 1  # no float rounding
    for bad in ("2 ** 10", "abs(3)", "1 / 0", "x + 1", "9" * 13 + " * 10", "1.5 + 1"):
        with pytest.raises(ArithmeticError_):
            arith_value(bad)
    with pytest.raises(ArithmeticError_):
        arith_value("1 - 2", allowed_ops="+")


def test_huge_adversarial_answer_is_bounded():
    g = gt("sudoku", None, {"original_sudoku": SUDOKU_GIVEN})
    junk = "[" * 50_000 + "]" * 50_000
    assert S.score(junk + f"```python\n{SUDOKU}\n```", g)[0] == 1.0
    assert S.score(f"```python\n{'[' * 5000}1{']' * 5000}\n```", g)[0] == 0.0  # too deep: no crash


def test_dyck_reasoning_errors_empty_answer_as_the_prompt_asks():
    g = gt("dyck_language_reasoning_errors", None, {"error_indices": []})
    for resp in ('""', "<answer></answer>", "<think>all fine</think>\n<answer> </answer>", '<answer>""</answer>',
                 "\\boxed{}", "“”"):
        assert S.score(resp, g)[0] == 1.0, resp
    for resp in ("", "<think>unfinished", "<think>x</think>", "<answer>4</answer>", '"4"', "unclear"):
        assert S.score(resp, g)[0] == 0.0, resp  # no answer at all is not an empty answer
    g = gt("dyck_language_reasoning_errors", None, {"error_indices": [3, 7]})
    assert S.score('"3,7"', g)[0] == 1.0 and S.score("<answer></answer>", g)[0] == 0.0
    assert S.score('""', g)[0] == 0.0


def test_minesweeper_bare_pairs_as_in_the_authors_tests():
    g = gt("minesweeper", None, {"current_mines": [[0, 1], [2, 3], [4, 5]]})
    for resp in ("The mines are at positions: (0,1), (2,3), (4,5)", "(0, 1); (2, 3) and (4, 5)",
                 "I found the mines at coordinates [(0, 1), (2, 3), (4, 5)].", "[[0, 1], [2, 3], [4, 5]]",
                 "first guess [(0, 1)], final: (0,1), (2,3), (4,5)"):
        assert S.score(resp, g)[0] == 1.0, resp
    for resp in ("The mines are at positions: (0,1), (2,3), (4,5), (6,7)", "(0,1), (2,3)",
                 "The coordinates of the mines are 0,1 and 2,3 and 4,5",
                 "mines (0,1), (2,3), (4,5); final answer [(0, 1)]"):
        assert S.score(resp, g)[0] == 0.0, resp


def test_wordscapes_rows_of_quoted_letters_separated_by_blanks():
    meta = {"grid": [["X", "X", "X"], ["0", "0", "X"]], "across_words": ["CAT"], "down_words": ["TO"]}
    g = gt("wordscapes", None, meta)
    assert S.score('[["C" "A" "T"], [" " " " "O"]]', g)[0] == 1.0
    assert S.score('[["C" "A" "T"], ["" "" "O"]]', g)[0] == 1.0
    assert S.score('[["C" "U" "T"], [" " " " "O"]]', g)[0] == 0.0
    assert S.score('[["C" A "T"], [" " " " "O"]]', g)[0] == 0.0  # an unquoted letter
    assert S.score('[["C" "A" "T" "S"], [" " " " "O"]]', g)[0] == 0.0  # wrong shape


def test_numbrix_digit_strings_are_numbers():
    g = gt("numbrix", None, {"grid": [[1, "X"], ["X", "X"]]})
    assert S.score('[["1", "2"], ["4", "3"]]', g)[0] == 1.0
    assert S.score('[["1", "3"], ["2", "4"]]', g)[0] == 0.0
    assert S.score('[["1", "two"], ["4", "3"]]', g)[0] == 0.0


def test_dyck_reasoning_errors_final_line_and_block_forms():
    g = gt("dyck_language_reasoning_errors", None, {"error_indices": [3, 7]})
    for resp in ("The answer is: 3, 7", "The answer is: **3, 7**", "Thought 3 and 7 are off.\n\nFinal answer: 3,7",
                 "```\n3, 7\n```", "Checked each step.\n3, 7", "答案：3，7"):
        assert S.score(resp, g)[0] == 1.0, resp
    for resp in ("The answer is: 3", "Thoughts 3 and 7 are wrong", "Final answer: 3, 7, 9", "Final answer:",
                 "Steps 3 and 7.\nThe answer is: 3 and 7"):
        assert S.score(resp, g)[0] == 0.0, resp
    g = gt("dyck_language_reasoning_errors", None, {"error_indices": []})
    assert S.score('All steps check out.\nThe answer is: ""', g)[0] == 1.0
    assert S.score("All steps check out.\nThe answer is:", g)[0] == 0.0
