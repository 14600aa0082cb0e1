"""The one root of every exception agentmd defines: `except AgentmdError` catches any of them.

It sits on the floor of the import graph beside `agentmd.vocabulary` (standard library only, imports nothing),
so the note model, the rules, the engine, the hooks and the command line can all derive from it, and the light
command line and hook entry points load it without the YAML or Markdown stacks. `agentmd.engine.errors`
re-exports it. A class that callers also catch as a built-in keeps that base beside this one
(`class PauseError(AgentmdError, ValueError)`).

The tree (module paths under the repository; `+X` keeps the built-in base X as well):

    AgentmdError                      agentmd/errors.py: exit_code 1
    ├── VaultSchemaError              vault_schema/errors.py
    │   └── YamlRefused
    ├── RulesError                    rules/errors.py
    │   ├── ContractError
    │   ├── DoorRefused               rules/door.py
    │   ├── PrefilterRefused          rules/prefilter/core.py
    │   ├── PatternError +ValueError  rules/contract/synctool.py
    │   └── _Halt                     rules/contract/loading.py
    ├── UsageError (exit_code 2)      engine/errors.py
    │   ├── RunBusy                   engine/enrich/records.py
    │   └── GateRefused               agentmd/cli/curate.py
    ├── ConfigError (exit_code 2), IndexBusy, IndexDamaged           engine/errors.py
    ├── DaemonError                   engine/client.py
    │   ├── DaemonUnreachable
    │   │   ├── DaemonTimeout
    │   │   ├── DaemonNotReached
    │   │   └── DaemonLost
    │   └── DaemonHTTPError
    ├── NotInVault, NotRegularFile, FileTooLarge, StillChanging +OSError   engine/fsutil.py
    ├── PauseError +ValueError        engine/recall_pause.py
    ├── SecretFileError               engine/secret.py
    ├── StalePlan                     engine/curate/groom.py
    ├── StepRefused                   engine/curate/steps.py
    ├── BodyChanged +RuntimeError     engine/enrich/compose.py
    ├── Unfaithful +ValueError, JudgeFailed +RuntimeError            engine/enrich/grounding.py
    ├── ModelCallFailed               engine/enrich/model.py
    ├── AnswerRefused +ValueError     engine/enrich/prompt.py
    ├── UnclearAnswer +ValueError     engine/enrich/restated.py
    ├── UnreadableLesson +ValueError  engine/enrich/lessons.py
    ├── AlreadyRunning, StateUnwritable   engine/daemon/instance.py
    ├── ArgumentError +ValueError     engine/daemon/mcp_tools.py
    ├── BadRequest +ValueError        engine/daemon/server.py
    │   └── BadField
    ├── PortInUse                     engine/daemon/server.py
    ├── GitMissing                    engine/git/runner.py
    ├── CycleFailure                  engine/git/runner.py
    │   └── HeadMoved                 engine/git/refs.py
    ├── GitError                      engine/git/repo_init.py
    ├── RescueError                   engine/git/rescue.py
    ├── SyncError                     engine/git/branches.py
    │   ├── RemoteRefused
    │   ├── RemoteUnreachable
    │   ├── SyncHeld
    │   ├── SyncWaits
    │   └── HistoryRewritten          engine/git/rewrite.py
    ├── _Fallback                     engine/git/tree_move.py
    ├── UndoRefused                   engine/git/undo_types.py
    ├── CacheUnwritable               engine/index/store.py
    ├── EmbedderUnavailable           engine/index/embedder.py
    │   └── _Slow                     engine/index/endpoint_embedder.py
    ├── ManifestError +ValueError     engine/jobs/manifest.py
    ├── JobFailed, JobSkipped, JobInterrupted, JobDeferred, BudgetExceeded   engine/jobs/runner.py
    ├── CaptureRefused                engine/write/request.py
    ├── CapReached                    engine/write/gate.py
    ├── StoreSwapping                 engine/write/store_swap.py
    ├── VaultReplaced                 engine/write/vault_guard.py
    ├── SettingsRefused               hooks/install.py
    └── HookError                     engine/hooklog.py
        └── HookGaveUp

tests/test_errors_root.py imports every module and checks that no exception class is left outside this tree.
"""


class AgentmdError(Exception):
    """Root of every exception agentmd defines. When one ends a command, the command line prints its message
    (which says how to fix the problem) and exits with its `exit_code`."""

    exit_code = 1
