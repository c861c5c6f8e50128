"""Recall through the installed wheel: a session created in a project starts, in its first
prompt, from what earlier sessions of that project saved with the scratchpad's tool — never a
private span or a secret, never another project's; `recall_search` and `recall_preview` show
what is kept; a bad project key is a `ValueError`. Run by `tests/tests/python_wheel.rs`."""

import pytest

import scratchpad
from scratchpad import Prompt, SessionNotFound, Turn

KEY = "sk-proj-Zx8Qw2Lp9Rt5Vb3Nm7Kj4Hg6Fd1Sa0Xc8Yu"
NOTE = f"parse_date drops the offset <private>my home is in Lisbon</private> deploy key {KEY}"
HEADING = "## What earlier sessions of this project left"


def first_prompt(host, session, message):
    return "\n".join(i.text for i in host.before_query(Turn(session, "first"), message).injections)


def test_a_new_session_starts_from_what_earlier_sessions_of_its_project_left(host, tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "src" / "deep").mkdir(parents=True)
    project = scratchpad.project_of_dir(repo / "src" / "deep")
    assert project == str(repo.resolve()), "a directory's project is its checkout's root"

    host.create_session("a", project=project)
    saved = host.call_tool(Turn("a", "t1"), "session.scratchpad", {"action": "append_notes", "content": NOTE})
    assert saved, "the note was saved"
    assert host.show("a")["session"]["project"] == project

    host.open_session("b", project=project)
    assert host.show("b")["session"]["project"] == project
    prompt = first_prompt(host, "b", "let's continue on the timezone bug")
    assert HEADING in prompt, prompt
    assert "parse_date drops the offset" in prompt, prompt
    assert "Lisbon" not in prompt and KEY not in prompt, "no private span, no secret"
    later = host.before_query(Turn("b", "second"), "go on")
    assert not any(HEADING in i.text for i in later.injections), "only the first turn carries it"

    hits = host.recall_search(project, "offset")
    assert [hit["document"]["session"] for hit in hits] == ["a"], hits
    document = hits[0]["document"]
    assert (document["project"], document["kind"]) == (project, "note")
    assert "parse_date drops the offset" in document["text"] and "offset" in hits[0]["snippet"]
    assert "Lisbon" not in document["text"] and KEY not in document["text"], document

    preview = host.recall_preview(project, "the timezone bug")
    assert isinstance(preview, Prompt)
    assert "parse_date drops the offset" in preview.render_system_only(""), "what a new session would receive"

    # Another project sees nothing of it; a session with no project neither.
    host.create_session("c", project="acme/other")
    assert host.show("c")["session"]["project"] == "acme/other"
    assert "parse_date" not in first_prompt(host, "c", "the timezone bug")
    assert host.recall_search("acme/other", "offset") == []
    host.create_session("loose")
    assert host.show("loose")["session"]["project"] is None
    assert "parse_date" not in first_prompt(host, "loose", "the timezone bug")


def test_a_bad_project_key_is_a_value_error_and_creates_nothing(host):
    with pytest.raises(ValueError, match="the project key is empty") as refused:
        host.create_session("s", project="")
    assert refused.value.code == "invalid-input"
    with pytest.raises(SessionNotFound):
        host.show("s")
    with pytest.raises(ValueError, match="control character"):
        host.open_session("s", project="a\nb")
    with pytest.raises(ValueError, match="the project key is empty"):
        host.recall_search("", "offset")
    with pytest.raises(ValueError, match="the project key is empty"):
        host.recall_preview("  ")
    with pytest.raises(ValueError, match="the project key is empty"):
        scratchpad.check_project("")
    scratchpad.check_project("acme/web")
    with pytest.raises(ValueError, match="not an absolute path"):
        scratchpad.project_of_dir("relative/dir")
    with pytest.raises(TypeError, match="project must be a str"):
        host.create_session("s", project=7)
