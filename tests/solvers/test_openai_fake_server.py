"""The openai backend's retries, re-asks and concurrency against a FAKE server (real HTTP on
127.0.0.1, scripted replies). The real-server test is test_openai_transformers_serve.py."""

from __future__ import annotations

import pytest

from factory.errors import UserError
from factory.solvers.openai_backend import OpenAISolver, SolverRequestError
from tests.solvers.fake_openai_server import FakeOpenAI, serve


def solver(url: str, **kw) -> OpenAISolver:
    return OpenAISolver("fake-model", base_url=url, backoff_s=0.01, **kw)


def test_retries_429_and_500_with_backoff() -> None:
    fake = FakeOpenAI(script=[429, 500, 503])
    with serve(fake) as url:
        s = solver(url, max_retries=3)
        out = s.generate(["p"], 2, 1.0, 1.0, 8, 0)
    assert len(out) == 1 and len(out[0]) == 2
    assert len(fake.requests) == 4 and s.retries == 3


def test_gives_up_after_max_retries_and_does_not_retry_4xx() -> None:
    with serve(FakeOpenAI(script=[500, 500, 500])) as url:
        with pytest.raises(SolverRequestError, match="InternalServerError after 3 tries"):
            solver(url, max_retries=2).generate(["p"], 1)
    fake = FakeOpenAI(script=[400])
    with serve(fake) as url:
        with pytest.raises(SolverRequestError, match="HTTP 400"):
            solver(url, max_retries=5).generate(["p"], 1)
    assert len(fake.requests) == 1


def test_a_server_that_returns_one_choice_is_asked_again_until_n() -> None:
    fake = FakeOpenAI(default_choices=1)
    with serve(fake) as url:
        out = solver(url).generate(["p", "q"], 3, 1.0, 1.0, 8, 5)
    assert [len(x) for x in out] == [3, 3]
    assert len(fake.requests) == 6
    assert sorted(r["n"] for r in fake.requests) == [1, 1, 2, 2, 3, 3]  # asks for what is missing
    seeds = [r["seed"] for r in fake.requests]
    assert len(set(seeds)) == 6  # each round a new seed, so a seeded server gives new samples
    assert len(set(out[0])) == 3


def test_greedy_asks_for_one_choice_and_repeats_it() -> None:
    """Greedy samples are one text, and vLLM's server answers 400 to n > 1 when greedy."""
    fake = FakeOpenAI()
    with serve(fake) as url:
        out = solver(url).generate(["p"], 3, 0.0, 1.0, 8, 5)
    assert [r["n"] for r in fake.requests] == [1]
    assert len(out[0]) == 3 and len(set(out[0])) == 1


def test_a_server_that_returns_no_choice_fails_loudly() -> None:
    with serve(FakeOpenAI(default_choices=0)) as url:
        with pytest.raises(SolverRequestError, match="only 0 of 2 choices"):
            solver(url).generate(["p"], 2)


def test_timeout_is_retried() -> None:
    fake = FakeOpenAI(script=["slow"])
    with serve(fake) as url:
        s = solver(url, timeout_s=0.5, max_retries=2)
        assert len(s.generate(["p"], 1)[0]) == 1
    assert s.retries == 1


def test_completions_endpoint_and_concurrency_limit() -> None:
    fake = FakeOpenAI()
    fake.delay_s = 0.05
    with serve(fake) as url:
        out = solver(url, endpoint="completions", concurrency=3).generate([f"p{i}" for i in range(12)], 2)
    assert all(len(x) == 2 and x[0].startswith("text ") for x in out)
    assert set(fake.paths) == {"/v1/completions"}
    assert fake.requests[0]["prompt"].startswith("p")
    assert 1 < fake.max_in_flight <= 3


def test_bad_settings_are_user_errors() -> None:
    with pytest.raises(UserError, match="endpoint"):
        OpenAISolver("m", base_url="http://127.0.0.1:1/v1", endpoint="responses")
    with pytest.raises(UserError, match="model name"):
        OpenAISolver("", base_url="http://127.0.0.1:1/v1")
