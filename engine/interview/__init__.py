"""Interviews: sessions that question a target model and score its answers.

- ``run``: runs, every item for every target, concurrently and resumable;
- ``runner``: drives one session step by step, whatever its protocol;
- ``session``: the one owner of a session's turns, verdicts, status and score;
- ``protocols``: one strategy module per protocol (``adaptive``, ``task``);
- ``kernels``: who writes the questions (offline or an LLM);
- ``targets``: the models under test;
- ``control``: interventions (pause, resume, force, inject, stop, rubric switch, verdict override);
- ``queries``: read-only session listings and detail;
- ``prompts``: the versioned prompts of the LLM kernel and judge.
"""
