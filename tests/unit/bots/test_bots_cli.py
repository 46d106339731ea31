"""``kalaro simulate``: the report on stdout, the progress bar on stderr, clear errors."""

from __future__ import annotations

import pytest

from kalaro.cli import main


def test_prints_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--game", "tongits", "--hands", "20", "--seats", "smart,random,random"]
    assert main([*argv, "--seed", "3", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "tongits (kalaro), 20 hands, seed 3" in out
    assert "hands/s" in out and "by policy" in out
    assert out.count("smart") >= 2 and "random" in out
    assert err == ""


def test_draws_a_progress_bar_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "simulate",
        "--game",
        "mahjong",
        "--hands",
        "5",
        "--seats",
        "smart,random,random,random",
    ]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "\r[" in err and "5/5 hands" in err and "hands/s" in err
    assert "mahjong (kalaro), 5 hands" in out


def test_plays_another_ruleset(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--game", "tongits", "--hands", "5", "--seats", "random,random,smart"]
    assert main([*argv, "--ruleset", "classic", "--no-progress"]) == 0
    assert "tongits (classic)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "tongits", "--seats", "smart,random"], "tongits is played by 3 seats; got 2"),
        (["--game", "mahjong", "--seats", "smart,random,random"], "mahjong is played by 4 seats"),
        (["--game", "tongits", "--seats", "smart,genius,random"], "unknown policy 'genius'"),
        (["--game", "chess", "--seats", "smart,random"], "unknown game 'chess'"),
        (["--game", "tongits", "--seats", "smart,random,random", "--hands", "0"], "at least 1"),
        (
            ["--game", "tongits", "--seats", "smart,random,random", "--ruleset", "house"],
            "unknown Tongits ruleset 'house'",
        ),
    ],
)
def test_bad_arguments_get_a_clear_message(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "--no-progress", *args]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("kalaro simulate: error: ")
    assert message in err


def test_missing_arguments_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["simulate", "--game", "tongits"])
    assert exited.value.code == 2
    assert "--seats" in capsys.readouterr().err
