r"""A graded equivalence corpus: (prediction, reference, expected verdict) by answer class.

Written for verl-focal from answer-writing conventions (textbook physics and engineering notation,
LaTeX habits, Python/NumPy habits); no entry is taken from a public benchmark's test files.  Each
class has positives (a careful human grader accepts) and hard negatives (near misses a loose
grader might accept), and every pair appears in both directions (prediction and reference
swapped), except the list-of-forms class, whose references are lists: there both the order of the
list and the form the prediction takes are varied.

``CORPUS[cls]`` is a list of :class:`Item`.  ``PHYSICS_CLASSES`` are the physics/engineering-style
answers (issue 13's recall target of 0.88 applies to them); ``ISSUE26_CLASSES`` are primes, angle
marks, congruence moduli, inequalities against intervals, constant expressions and Unicode forms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Item:
    pred: str
    ref: Any  # a string, or a list of accepted forms
    ok: bool


def _both(pairs, ok):
    out = []
    for a, b in pairs:
        out.append(Item(a, b, ok))
        out.append(Item(b, a, ok))
    return out


SCI_POS = [
    ("1.24e-8", r"1.24 \times 10^{-8}"), ("3e8", r"3\times10^8"), ("6.5e-2", "0.065"), ("1e-3", r"10^{-3}"),
    ("2.5E6", r"2.5 \times 10^{6}"), ("6.022e23", r"6.022\times10^{23}"), (r"1.6 \cdot 10^{-19}", r"1.6\times10^{-19}"),
    ("4.2e+3", "4200"), (r"7.5 \times 10^{-4}", "0.00075"), (r"1.0\times 10^{5}", "100000"),
    ("5.67e-8", r"5.67 \times 10^{-8}"), ("1.38e-23", r"1.38\times 10^{-23}"), ("3.00e8", r"3 \times 10^{8}"),
    (r"2 \times 10^{-7}", "2e-7"), (r"8.85 \times 10^{-12}", "8.85e-12"), (r"10^{6}", "1e6"),
    (r"1.2\times10^{3}", "1200"), (r"4.5 \times 10^{-3}", "0.0045"), ("9.11e-31", r"9.11 \times 10^{-31}"),
    (r"1.5 \times 10^{11}", "1.5e11"), (r"6.67 \cdot 10^{-11}", r"6.67 \times 10^{-11}"),
    ("1.99E30", r"1.99 \times 10^{30}"), (r"3.2 \times 10^{-5}", "3.2e-05"), ("2.998e8", r"2.998 \times 10^{8}"),
    (r"1.0 \times 10^{-14}", "1e-14"), (r"4 \times 10^{-6}", "0.000004"), ("8.314", r"8.314\times10^{0}"),
    (r"5.0\times10^{-1}", "0.5"), (r"1.496 \times 10^{11}", "149600000000"), (r"-1.6 \times 10^{-19}", "-1.6e-19"),
    (r"2.7 \times 10^{-3}", r"2.70 \times 10^{-3}"), ("1.054e-34", r"1.054 \times 10^{-34}"),
]
SCI_NEG = [
    ("1.3e-8", r"1.24\times10^{-8}"), ("3e7", r"3\times10^8"), ("6.5e-3", "0.065"), ("1e-4", r"10^{-3}"),
    ("2.5e-6", r"2.5\times10^{6}"), ("-1.6e-19", r"1.6\times10^{-19}"), ("6.022e22", r"6.022\times 10^{23}"),
    ("1.25e-8", r"1.24 \times 10^{-8}"), ("4.8e-19", "1.6e-19"), (r"5.67\times10^{8}", r"5.67\times10^{-8}"),
    ("1.2e-3", "0.0013"), (r"3 \times 10^{-6}", r"4 \times 10^{-6}"), (r"2 \times 10^{5}", "20000"),
    ("7e-10", r"7.5\times10^{-10}"),
]

UNIT_POS = [
    (r"1950^\circ C", "1950"), (r"41.8^\circ", "41.8"), (r"6.43 \times 10^{16} \text{ cm}^{-3}", r"6.43\times10^{16}"),
    (r"300 \mathrm{~K}", "300"), (r"12\,\text{m/s}", "12"), (r"5 \text{ cm}", "5"), (r"9.8 \, \mathrm{m/s^2}", "9.8"),
    (r"2.5\text{ kg}", "2.5"), (r"60^{\circ}", "60"), ("45°", "45"), (r"0.25 \text{ J}", "0.25"),
    (r"3.0 \times 10^{8} \mathrm{~m} \mathrm{~s}^{-1}", r"3.0\times10^{8}"), (r"100 \text{ N}", "100"),
    (r"1.5 \text{ eV}", "1.5"), (r"20 \text{ dollars}", "20"), (r"7 \text{ hours}", "7"), (r"4 \text{ units}", "4"),
    (r"273.15\ \mathrm{K}", "273.15"), (r"5 \text{ cm}", r"5\,\mathrm{cm}"), (r"12 \text{ m/s}", r"12\,\mathrm{m/s}"),
    (r"90^\circ", r"90^{\circ}"), (r"1950^\circ \mathrm{C}", r"1950^\circ C"), (r"8 \text{ cm}^2", "8"),
    (r"2.0\text{ s}", "2"), (r"1.2 \times 10^{3} \text{ Pa}", "1200"), (r"50 \mu m", "50"),
    (r"3.3 \times 10^{-7}\,\mathrm{m}", "3.3e-7"), (r"0.5\ \text{A}", r"\frac{1}{2}"), (r"12 \text{ V}", r"12\text{ V}"),
    (r"4.5 \text{ km}", "4.5"), (r"1.2 \times 10^{-3}\ \mathrm{mol}", "0.0012"), (r"110\,\Omega", "110"),
    (r"6.0 \text{ W}", "6"), (r"25 \text{ Hz}", r"25\,\text{Hz}"),
    (r"3\times10^8\,\mathrm{m\,s^{-1}}", r"3 \times 10^8 \text{ m/s}"), (r"8.3 \text{ J/(mol K)}", r"8.3\,\mathrm{J\,mol^{-1}\,K^{-1}}"),
    (r"v_0 = 3 \text{ m/s}", "3"), (r"E \approx 2.1 \text{ eV}", r"2.1\,\mathrm{eV}"), (r"12 \mu m", r"12\,\mu\text{m}"),
    (r"\approx 0.25 \text{ s}", "0.25"), (r"−40^\circ", "-40"),
    (r"5\sqrt{2}\text{ cm}", r"5\sqrt{2}"), (r"\frac{\pi}{4}\text{ rad}", r"\frac{\pi}{4}"), (r"30^\circ", r"\frac{\pi}{6}"),
    (r"\frac{mg}{k}\,\mathrm{m}", r"\frac{mg}{k}"),
]
UNIT_NEG = [
    (r"5 \text{ cm}", r"5 \text{ m}"), (r"12 \text{ m/s}", r"12\text{ km/h}"), (r"300 \text{ K}", r"300 \text{ mK}"),
    (r"6 \text{ cm}", "5"), (r"1950^\circ C", "1590"), (r"41.8^\circ", "48.1"), (r"2 \text{ kg}", r"2\text{ g}"),
    (r"5 \text{ cm}^2", r"5\text{ cm}^3"), ("5x", "5"), ("5 x", "5"), (r"5 \text{ s}", r"5 \text{ ms}"),
    (r"6.43 \times 10^{16} \text{ cm}^{-3}", r"6.43 \times 10^{16} \text{ m}^{-3}"), (r"9.8\,\mathrm{m/s^2}", "9.6"),
    (r"1.5 \text{ eV}", r"1.5 \text{ keV}"), (r"3.0\times10^{8}\ \mathrm{m/s}", r"3.0\times10^{6}"),
    (r"5\text{ m/s}", r"5\text{ s/m}"), (r"9.8\ \mathrm{m\,s^{-2}}", r"9.8 \text{ m/s}"), (r"v_0 = 4 \text{ m/s}", "3"),
    (r"12 \mu m", r"12\,\text{mm}"), (r"2\sqrt{2}\,\text{m}", r"2\sqrt{2}\,\text{cm}"), (r"45^\circ", r"\frac{\pi}{6}"),
    (r"\frac{\pi}{3}\text{ rad}", r"\frac{\pi}{4}"),
]

LITERAL_POS = [
    ("-1./3", r"-\frac{1}{3}"), (".5", "0.5"), ("1,000", "1000"), (r"1\,000", "1000"), ("3.0", "3"),
    ("-.25", r"-\frac{1}{4}"), ("12.00", "12"), (r"1{,}000{,}000", "1000000"), ("1,234,567", "1234567"),
    ("5.", "5"), ("0.50", r"\frac12"), ("+3", "3"), ("0.125", r"\frac{1}{8}"), ("1/8", "0.125"), ("3.50", "3.5"),
    ("10.", "10"), (r"1\,234.5", "1234.5"), ("0.333", r"\frac{1}{3}"), ("0.6667", r"\frac{2}{3}"),
    ("2/4", r"\frac{1}{2}"), ("100,000", r"10^5"), ("-0.75", "-3/4"), ("1./2", "0.5"), (r"2\,500", "2500"),
    ("0.0", "0"), ("-7.0", "-7"), ("1.5", r"\frac{3}{2}"),
]
LITERAL_NEG = [
    ("1,001", "1000"), ("0.3", r"\frac{1}{3}"), ("-0.5", "0.5"), ("1./4", r"\frac{1}{3}"), (".55", "0.5"),
    ("12.01", "12"), ("3.0001", "3"), ("2,000", "200"), ("1.25", r"\frac{5}{8}"), ("-1./3", r"\frac{1}{3}"),
    (r"1\,500", "1050"), ("0.667", r"\frac{1}{3}"), ("4.5", "4"),
]

BRACE_POS = [
    ("E_1, E_2", r"E_{1},E_{2}"), ("x^2", "x^{2}"), ("(a_1, a_2, a_3)", r"(a_{1}, a_{2}, a_{3})"),
    (r"\{x_1, x_2\}", r"\{x_{1}, x_{2}\}"), ("v_0 t", "v_{0} t"), ("a_n = 2^n", "a_{n} = 2^{n}"),
    (r"\theta_1", r"\theta_{1}"), ("[x_1, x_2]", "[x_{1},x_{2}]"), ("k_B T", "k_{B} T"), ("m_1 + m_2", "m_{1}+m_{2}"),
    ("T_c", "T_{c}"), ("(E_1, E_2)", "(E_{1},E_{2})"), (r"\frac{m_1}{m_2}", r"\frac{m_{1}}{m_{2}}"),
    ("x^{3} + y^{3}", "x^3+y^3"), ("F_{1}, F_{2}, F_{3}", "F_1,F_2,F_3"), (r"\lambda_1 = 2", r"\lambda_{1} = 2"),
    ("(x_0, y_0)", "(x_{0}, y_{0})"), ("e^{x}", "e^x"), ("r_A r_B", "r_{A} r_{B}"), ("10^{3}", "10^3"),
]
BRACE_NEG = [
    ("(E_2, E_1)", "(E_{1}, E_{2})"), ("a_{1}", "a_{2}"), ("x^{3}", "x^{2}"), ("(a_1, a_2)", "(a_1, a_2, a_3)"),
    ("T_c", "T_{h}"), ("m_{1}+m_{2}", "m_1 m_2"), (r"\theta_{1}", r"\theta_{2}"), ("k_B T", "k_B"), ("v_{0} t", "v_{0}"),
    ("E_1, E_3", "E_{1},E_{2}"), ("x_{12}", "x_1"), ("e^{-x}", "e^x"),
]

ALGEBRA_POS = [
    (r"\frac{1}{m} t", r"\frac{t}{m}"), ("t/m", r"\frac{1}{m}t"), (r"\frac{1}{2} m v^2", r"\frac{m v^{2}}{2}"),
    (r"2 \pi r", r"2r\pi"), (r"c^2 m", "mc^2"), ("a b", "ba"), (r"\frac{x}{2} y", r"\frac{xy}{2}"),
    (r"\frac{1}{\sqrt{2}}", r"\frac{\sqrt{2}}{2}"), (r"\frac{g t^2}{2}", r"\frac{1}{2} g t^{2}"),
    ("(x+1)^2", "x^2+2x+1"), (r"\frac{1}{R} V", r"\frac{V}{R}"), (r"\frac{m g}{k}", r"\frac{1}{k} m g"),
    (r"x \cdot y", "xy"), (r"\frac{a+b}{2}", r"\frac{b+a}{2}"), (r"\frac{1}{2} a t^2", r"\frac{a t^{2}}{2}"),
    (r"\frac{q}{4 \pi r^2}", r"\frac{1}{4\pi} \frac{q}{r^2}"), (r"2 \sqrt{g h}", r"\sqrt{4 g h}"),
    (r"\frac{1}{L C}", r"\frac{1}{C L}"), (r"m g h", r"g h m"), (r"\frac{k}{m} x", r"\frac{k x}{m}"),
    (r"\frac{3}{2} k T", r"\frac{3 k T}{2}"), (r"x (x - 1)", "x^2 - x"),
]
ALGEBRA_NEG = [
    (r"\frac{1}{m} t", r"\frac{m}{t}"), (r"c^2 m", "c^2"), (r"\frac{1}{2} m v^2", "m v^2"), (r"2\pi r", r"\pi r^2"),
    ("x^2+2x+1", "(x-1)^2"), (r"\frac{V}{R}", "V R"), (r"\frac{t}{m}", r"\frac{1}{m}"), (r"\frac{mg}{k}", r"\frac{m}{k}"),
    ("a b", "a+b"), (r"\frac{x}{2} y", r"\frac{x}{2}"), (r"\frac{3}{2} k T", r"\frac{2}{3} k T"),
    (r"\sqrt{2 g h}", r"\sqrt{g h}"), (r"m g h", "m g"),
]

EQUATION_POS = [
    ("y = 2x + 1", "2x + 1 = y"), ("y=2x+1", "2x - y + 1 = 0"), ("x^2 + y^2 = 1", "y^2 + x^2 - 1 = 0"),
    ("E = mc^2", "E = c^2 m"), ("2y = 4x + 2", "y = 2x + 1"), ("F = ma", "ma = F"), ("x + y = 5", "y = 5 - x"),
    ("3x - 2y = 6", r"y = \frac{3}{2}x - 3"), ("v^2 = u^2 + 2as", "v^2 - u^2 = 2as"), ("y = -x", "x + y = 0"),
    (r"z = \frac{x}{2}", "2z = x"), ("x^2 = 4y", r"y = \frac{x^2}{4}"), ("a + b = c", "c = b + a"),
    (r"y = \frac{1}{2} x", "x = 2y"), ("V = I R", "I R = V"), ("x - 3 = 0", "x = 3"),
]
EQUATION_NEG = [
    ("y = 2x - 1", "y = 2x + 1"), ("x = 2", "x^2 = 4"), ("y = x^2", "y^2 = x"), ("E = mc", "E = mc^2"),
    ("x + y = 5", "x - y = 5"), ("2y = 4x + 1", "y = 2x + 1"), ("F = ma", r"F = \frac{m}{a}"),
    ("x^2 + y^2 = 1", "x^2 + y^2 = 2"), ("V = I R", r"V = \frac{I}{R}"), ("y = -x", "y = x"),
]

CODE_POS = [
    ("np.arcsin(10/13)", r"\arcsin{\frac{10}{13}}"), ("math.sqrt(2)", r"\sqrt{2}"), ("sqrt(3)/2", r"\frac{\sqrt{3}}{2}"),
    ("2**10", "1024"), ("np.pi/4", r"\frac{\pi}{4}"), ("np.exp(2)", "e^{2}"), ("math.log(2)", r"\ln 2"),
    ("x**2 + 1", "x^2+1"), ("np.arctan(3/4)", r"\arctan\left(\frac{3}{4}\right)"), ("3*np.sqrt(2)", r"3\sqrt{2}"),
    ("2*pi", r"2\pi"), ("np.log10(1000)", "3"), ("abs(-3)", "3"), ("math.atan(1)", r"\frac{\pi}{4}"),
    ("np.sqrt(x**2 + 1)", r"\sqrt{x^2+1}"), ("np.cos(np.pi/3)", r"\frac{1}{2}"), ("math.asin(0.5)", r"\frac{\pi}{6}"),
    ("sqrt(2)*x", r"\sqrt{2} x"),
]
CODE_NEG = [
    ("np.arcsin(10/13)", r"\arccos\frac{10}{13}"), ("math.sqrt(3)", r"\sqrt{2}"), ("2**9", "1024"),
    ("np.pi/3", r"\frac{\pi}{4}"), ("np.exp(3)", "e^2"), ("x**3", "x^2"), ("np.arctan(4/3)", r"\arctan\frac{3}{4}"),
    ("np.log(100)", "2"), ("math.sqrt(8)", "2"), ("3*np.sqrt(3)", r"3\sqrt{2}"),
]

WRAPPER_POS = [
    (r"\textbf{(051)}", "51"), (r"\text{5}", "5"), (r"\mathbf{12}", "12"), (r"\displaystyle \frac{1}{2}", r"\frac12"),
    ("$7$", "7"), (r"\left( 1, 2 \right)", "(1,2)"), (r"\boxed{42}", "42"), (r"\underline{17}", "17"),
    (r"\textbf{\text{yes}}", r"\text{yes}"), (r"\text{ 3/4 }", r"\frac34"), (r"\mathrm{42}", "42"),
    (r"\boldsymbol{x+1}", "x+1"), (r"\text{Monday}", "Monday"), (r"\textit{odd}", r"\text{odd}"), ("12.", "12"),
    (r"\textbf{(C)}", "C"), (r"\mathbf{v} = 3", "v = 3"), (r"\text{(B)}", "(B)"), (r"\mathrm{\frac{5}{2}}", "2.5"),
    (r"\displaystyle\left[0, 1\right]", "[0,1]"), (r"\textbf{Answer: } 42", "42"), (r"\$12.50", "12.5"),
]
WRAPPER_NEG = [
    (r"\textbf{(050)}", "51"), (r"\text{6}", "5"), (r"\mathbf{13}", "12"), (r"\text{Tuesday}", "Monday"),
    (r"\text{even}", r"\text{odd}"), ("$8$", "7"), (r"\left(2, 1\right)", "(1,2)"), (r"\textbf{(D)}", "C"),
    (r"\displaystyle \frac{1}{3}", r"\frac12"), (r"\left[0, 1\right)", "[0,1]"), (r"\textbf{Answer: } 41", "42"),
    (r"\$12.05", "12.5"),
]

ALT_POS = [
    ("0.5", [r"\frac{1}{2}", "0.5"]), ("1/2", [r"\frac{1}{2}", "0.5"]), ("1.414", [r"\sqrt{2}", "1.414"]),
    ("3", ["x=3", "3"]), ("6.28", [r"2\pi", "6.28"]), (r"\text{true}", [r"\text{yes}", r"\text{true}"]),
    ("(2,1)", ["(1,2)", "(2,1)"]), (r"60^\circ", [r"\frac{\pi}{3}", "60"]), (r"\frac{\pi}{3}", [r"\frac{\pi}{3}", "60"]),
    ("0.5", "['1/2', '0.5']"), (r"\frac{1}{2}", '["1/2", "0.5"]'), ("2.0e3", ["2000", r"2 \times 10^{3}"]),
    (r"5 \text{ cm}", ["5", "0.05 m"]), ("E_1", ["E_{1}", "E_{a}"]),
]
ALT_NEG = [
    ("0.6", [r"\frac{1}{2}", "0.5"]), ("no", [r"\text{yes}", r"\text{true}"]), ("1", "[1, 2]"), ("5", ["3", "4"]),
    ("1.5", [r"\sqrt{2}", "1.414"]), ("(1,3)", ["(1,2)", "(2,1)"]), ("0.4", "['1/2', '0.5']"),
    (r"5 \text{ m}", ["5 cm", "0.05 m"]), ("E_2", ["E_{1}", "E_{a}"]),
]


PRIME_POS = [
    (r"x^{\prime}+\frac{r}{V} x-r c=0", r"x' + \frac{r}{V}x - rc = 0"), (r"x^\prime", "x'"), (r"y^{\prime\prime}", "y''"),
    (r"f^{\prime}(x)", "f'(x)"), (r"y'' + y = 0", r"y^{\prime\prime}+y=0"), (r"x' = 2x", r"2x = x^{\prime}"),
    (r"\theta'", r"\theta^{\prime}"), (r"v_0'", r"v_{0}^{\prime}"), (r"y' = -\frac{x}{y}", r"y^{\prime}=-\frac{x}{y}"),
    (r"2x'", r"2 x^{\prime}"), ("x'+y'", r"y^\prime + x^\prime"), (r"A' B", r"B A^{\prime}"), ("x′", "x'"),
    (r"f'(x) = 3x^2", r"f^{\prime}(x)=3x^{2}"), (r"y^{\prime \prime}", "y″"), ("y' = 2x", "2x"),
]
PRIME_NEG = [
    ("x", "x'"), (r"x^{\prime}", "x"), ("x''", "x'"), ("y'", r"y^{\prime\prime}"),
    (r"x'+\frac{r}{V}x-rc=0", r"x+\frac{r}{V}x-rc=0"), ("f'(x)", "f(x)"), (r"\theta'", r"\theta"), ("x' + y", "x + y'"),
    ("2x'", "2x"), ("y'' + y = 0", "y' + y = 0"), (r"A' B", "A B"), ("x′", "x"), ("2x = y'", "y'"),
]

ANGLE_POS = [
    ("0.003", r"0.003^{\prime \prime}"), ("30'", "30"), ("30''", "30"), (r"30^{\prime}", "30'"), (r"15^{\prime\prime}", "15''"),
    ("45°", r"45^\circ"), (r"12.5'", "12.5"), ("30′", "30'"), ("0.003″", "0.003''"), (r"2.5^{\prime\prime}", "2.5 ''"),
    (r"60^{\circ}", "60°"), (r"0.5^{\prime}", r"\frac{1}{2}'"), (r"1.5''", r"1.5\,''"),
    # sexagesimal: d + m/60 + s/3600 degrees
    (r"30^\circ 15'", r"30.25^\circ"), ("30°15′", "30.25"), (r"30^{\circ}15^{\prime}36^{\prime\prime}", r"30.26^\circ"),
    (r"-12^\circ 30'", "-12.5°"), (r"45^\circ 0' 36''", "45.01°"), (r"10^\circ 7.5'", r"10.125^\circ"),
]
ANGLE_NEG = [
    (r"30^\circ", "30'"), ("30°", "30'"), ("30''", "30'"), (r"30^{\prime\prime}", r"30^\circ"), ("0.003''", "0.03"),
    ("30'", "31"), ("45''", "45°"), (r"0.003^{\prime\prime}", r"0.003^{\prime}"), ("12'", "12.5'"), ("30′", "30″"),
    (r"30^\circ 16'", r"30.25^\circ"), (r"30^\circ 15' 37''", r"30.26^\circ"), (r"12^\circ 30'", "-12.5"),
    (r"30^\circ 15'", "30.15"), (r"45^\circ 36'", "45.01"),
]

CONGRUENCE_POS = [
    (r"42 \pmod{100}", "42"), ("42 (mod 100)", "42"), (r"3 \pmod 7", "3"), (r"x \equiv 5 \pmod{12}", "5"),
    (r"\equiv 5 \pmod{12}", r"5 \pmod{12}"), (r"142 \pmod{100}", r"42 \pmod{100}"), (r"42\ (\text{mod } 100)", r"42 \pmod{100}"),
    (r"7 \pmod{10}", "7"), (r"n \equiv 2 \pmod 3", r"2 \pmod{3}"), ("1 (mod 4)", r"1 \pmod{4}"), (r"-1 \pmod{5}", r"4 \pmod{5}"),
]
CONGRUENCE_NEG = [
    (r"42 \pmod{100}", "43"), ("42 (mod 100)", "142"), (r"42 \pmod{100}", r"42 \pmod{50}"), (r"3 \pmod 7", "4"),
    (r"x \equiv 5 \pmod{12}", "7"), (r"1 \pmod{4}", r"3 \pmod{4}"), (r"2 \pmod{3}", r"2 \pmod{5}"), ("42", "24 (mod 100)"),
]

INTERVAL_POS = [
    (r"-2\leq x\leq 3", "[-2,3]"), ("-2<x<3", "(-2,3)"), (r"-2\le x<3", "[-2,3)"), (r"x \geq 1", r"[1, \infty)"),
    ("x < 5", r"(-\infty, 5)"), (r"3 \geq x \geq -2", "[-2, 3]"), (r"0 < t \leq \frac{1}{2}", r"(0, \frac{1}{2}]"),
    (r"x > -1", r"(-1,\infty)"), (r"\frac{1}{2} \le x \le 2", "[0.5, 2]"), (r"x \in [-2, 3]", r"-2 \leq x \leq 3"),
    (r"x \leq 4", r"(-\infty, 4]"), (r"-\sqrt{2} < x < \sqrt{2}", r"(-\sqrt{2}, \sqrt{2})"), (r"x \geqslant 0", r"[0,+\infty)"),
]
INTERVAL_NEG = [
    (r"-2< x\leq 3", "[-2,3]"), (r"-2\leq x\leq 3", "(-2,3)"), (r"-2\leq x\leq 3", "[-2,4]"), (r"x \geq 1", r"(1, \infty)"),
    ("x < 5", r"(-\infty, 5]"), ("x > 5", r"(-\infty, 5)"), (r"-3 \le x \le 2", "[-2,3]"), (r"0 < t \le 1", "[0,1]"),
    (r"x \leq 4", r"[4, \infty)"),
]

CONSTANT_POS = [
    (r"e^{i\pi}", "-1"), (r"\cos 0", "1"), (r"e^{i\pi} + 1", "0"), (r"\sin\frac{\pi}{2}", "1"), (r"\ln e", "1"), ("i^2", "-1"),
    (r"e^{2\pi i}", "1"), (r"\tan\frac{\pi}{4}", "1"), (r"\log_2 8", "3"), (r"\cos\pi", "-1"), (r"\sqrt{16}", "4"),
    (r"e^{0}", "1"), (r"2\sin\frac{\pi}{6}", "1"), ("(1+i)^2", "2i"),
]
CONSTANT_NEG = [
    (r"e^{i\pi}", "1"), (r"\cos 0", "0"), (r"e^{i\pi}+1", "1"), (r"\sin\frac{\pi}{2}", "0"), ("i^2", "1"), (r"\cos\pi", "1"),
    (r"\log_2 8", "2"), (r"e^{\pi}", "-1"), (r"\tan\frac{\pi}{4}", r"\frac{\pi}{4}"), ("(1+i)^2", "2"),
]

UNICODE_POS = [
    ("４２", "42"), ("－1", "-1"), ("3，4", "3,4"), ("√2", r"\sqrt{2}"), ("½", r"\frac{1}{2}"), ("2√3", r"2\sqrt{3}"),
    ("3½", r"\frac{7}{2}"), ("x²+1", "x^2+1"), ("10⁻³", "0.001"), ("2×3", "6"), ("2·5", "10"), ("−7", "-7"),
    ("π/2", r"\frac{\pi}{2}"), ("√(x+1)", r"\sqrt{x+1}"), ("¾", "0.75"), ("（1，2）", "(1,2)"), ("x₁+x₂", "x_1+x_2"),
    ("θ", r"\theta"), ("5 µm", r"5\,\mu\text{m}"), ("x ≤ 3", r"(-\infty, 3]"),
]
UNICODE_NEG = [
    ("４３", "42"), ("－1", "1"), ("3，4", "3,5"), ("√3", r"\sqrt{2}"), ("⅓", r"\frac{1}{2}"), ("x²", "x2"),
    ("3½", r"\frac{3}{2}"), ("½", "12"), ("10⁻³", "0.01"), ("2√3", r"\sqrt{23}"), ("x₁", "x_2"), ("θ", r"\phi"),
    ("5 µm", r"5\,\text{mm}"), ("¼", "14"), ("x ≤ 3", r"(-\infty, 3)"),
]


_INTS = [0, 1, 7, 12, 99, 100, 999, 1000, 2024, 123456, 1000000, -5, -100]


def _integer_items():
    out = []
    for n in _INTS:
        for d in (1, -1):
            m = n + d
            out.append(Item(str(m), str(n), False))
            out.append(Item(f"{m:,}" if abs(m) >= 1000 else f"{m}.0", str(n), False))
        out.append(Item(str(n), str(n), True))
        out.append(Item(f"{n:,}" if abs(n) >= 1000 else f"{n}.0", str(n), True))
        out.append(Item(str(n), f"{n:,}" if abs(n) >= 1000 else f"{n}.0", True))
    for n in (1000, 2024, 123456, 1000000):  # the near miss in scientific notation
        out.append(Item(f"{(n + 1) / 10 ** (len(str(n)) - 1)}e{len(str(n)) - 1}", str(n), False))
    return out


CORPUS: dict[str, list[Item]] = {
    "sci_notation": _both(SCI_POS, True) + _both(SCI_NEG, False),
    "units": _both(UNIT_POS, True) + _both(UNIT_NEG, False),
    "literals": _both(LITERAL_POS, True) + _both(LITERAL_NEG, False),
    "braces": _both(BRACE_POS, True) + _both(BRACE_NEG, False),
    "algebra": _both(ALGEBRA_POS, True) + _both(ALGEBRA_NEG, False),
    "equations": _both(EQUATION_POS, True) + _both(EQUATION_NEG, False),
    "code": _both(CODE_POS, True) + _both(CODE_NEG, False),
    "wrappers": _both(WRAPPER_POS, True) + _both(WRAPPER_NEG, False),
    "accepted_forms": [Item(p, r, True) for p, r in ALT_POS] + [Item(p, list(reversed(r)), True) for p, r in ALT_POS if isinstance(r, list)]
    + [Item(p, r, False) for p, r in ALT_NEG] + [Item(p, list(reversed(r)), False) for p, r in ALT_NEG if isinstance(r, list)],
    "integers": _integer_items(),
    "primes": _both(PRIME_POS, True) + _both(PRIME_NEG, False),
    "angle_marks": _both(ANGLE_POS, True) + _both(ANGLE_NEG, False),
    "congruences": _both(CONGRUENCE_POS, True) + _both(CONGRUENCE_NEG, False),
    "intervals": _both(INTERVAL_POS, True) + _both(INTERVAL_NEG, False),
    "constants": _both(CONSTANT_POS, True) + _both(CONSTANT_NEG, False),
    "unicode": _both(UNICODE_POS, True) + _both(UNICODE_NEG, False),
}
PHYSICS_CLASSES = ("sci_notation", "units")
# the classes of issue 26: answers real solutions write that the rules used to miss or over-accept
ISSUE26_CLASSES = ("primes", "angle_marks", "congruences", "intervals", "constants", "unicode")


def boxed(pred: str) -> str:
    """A response that boxes ``pred`` at the end of some reasoning."""
    return "We compute step by step and collect the result.\n\nThe final answer is $\\boxed{" + pred + "}$."


def cross_pairs(stride: int = 7) -> list[tuple[str, Any, Any]]:
    """``(prediction, own reference, other reference)`` for every positive item against the
    reference of the positive item ``stride`` places on, over all classes: a solution scored
    against another problem's answer.  Callers skip pairs whose two references are the same
    answer (then a match is right, not a false positive)."""
    pos = [it for items in CORPUS.values() for it in items if it.ok]
    return [(it.pred, it.ref, pos[(i + stride) % len(pos)].ref) for i, it in enumerate(pos)]
