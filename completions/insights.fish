# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_insights_global_optspecs
    string join \n from= raw no-timestamp turn-ids line-buffered block-buffered strict compat= max-line-bytes= redact j/jobs= color= h/help V/version
end

function __fish_insights_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_insights_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_insights_using_subcommand
    set -l cmd (__fish_insights_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c insights -n "__fish_insights_needs_command" -l from -d 'The provider of the input, or `auto` to detect it line by line' -r -f -a "auto\t'Detect the provider of each line by its shape'
qwen\t'Qwen Code stream-json (--output-format stream-json); Claude-compatible'
amp\t'Amp --execute --stream-json; Claude-compatible'
cursor\t'Cursor Agent stream-json (cursor-agent -p --output-format stream-json)'
opencode\t'OpenCode run --format json'
claude\t'Claude Code stream-json (-p --output-format stream-json --verbose), SDK control protocol'
codex\t'Codex: exec --json, app-server JSON-RPC v2 (client tee too), legacy codex/event'
gemini\t'Gemini CLI stream-json (-p --output-format stream-json)'
aceclaw\t'AceClaw daemon JSON-RPC notifications (stream.*, permission.*), or its WebSocket bridge'
acp\t'ACP (Agent Client Protocol) JSON-RPC: an agent\'s output, or both directions'"
complete -c insights -n "__fish_insights_needs_command" -l compat -d 'Restrict output to a consumer\'s event types' -r -f -a "cc-insights\t'Only the 17 event types of CC-Insights; additions folded or dropped'"
complete -c insights -n "__fish_insights_needs_command" -l max-line-bytes -d 'Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and skipped' -r
complete -c insights -n "__fish_insights_needs_command" -s j -l jobs -d 'Convert on N threads; the output is the same, byte for byte' -r
complete -c insights -n "__fish_insights_needs_command" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_needs_command" -l raw -d 'Attach the original input line to every event as `raw`'
complete -c insights -n "__fish_insights_needs_command" -l no-timestamp -d 'Omit `timestamp` where the input line carries no time of its own'
complete -c insights -n "__fish_insights_needs_command" -l turn-ids -d 'Name the turn of every event of a turn (`turnId`, the adapter contract\'s run id)'
complete -c insights -n "__fish_insights_needs_command" -l line-buffered -d 'Flush standard output after every input line'
complete -c insights -n "__fish_insights_needs_command" -l block-buffered -d 'Flush standard output only when its buffer (64 KiB) is full and at the end'
complete -c insights -n "__fish_insights_needs_command" -l strict -d 'Stop with status 1 at the first input line that cannot be read'
complete -c insights -n "__fish_insights_needs_command" -l redact -d 'Mask secrets in every string of the output, `raw` included, as `[REDACTED:KIND]`'
complete -c insights -n "__fish_insights_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_needs_command" -s V -l version -d 'Print version'
complete -c insights -n "__fish_insights_needs_command" -a "convert" -d 'Convert provider output to InsightsEvent JSONL (what `insights` does without a command)'
complete -c insights -n "__fish_insights_needs_command" -a "validate" -d 'Check event logs against the schema and the protocol\'s rules (for CI)'
complete -c insights -n "__fish_insights_needs_command" -a "replay" -d 'Render a log or a live stream as a transcript for people'
complete -c insights -n "__fish_insights_needs_command" -a "reduce" -d 'Fold an event log into state: entries, the turn tree, totals, what is pending'
complete -c insights -n "__fish_insights_needs_command" -a "providers" -d 'Print what each provider\'s output carries: the capability matrix, as a table or JSON'
complete -c insights -n "__fish_insights_needs_command" -a "run" -d 'Drive an agent: commands on standard input, events of both directions on standard output'
complete -c insights -n "__fish_insights_needs_command" -a "schema" -d 'Print a JSON Schema (draft 2020-12): of the events (the default), of reduce\'s state or of the commands'
complete -c insights -n "__fish_insights_needs_command" -a "sessions" -d 'List the sessions in the agents\' own session files: agent, id, project, times, turns, models, tokens, cost'
complete -c insights -n "__fish_insights_needs_command" -a "usage" -d 'Sum tokens and cost from the agents\' own session files, grouped by day, model, …'
complete -c insights -n "__fish_insights_needs_command" -a "statusline" -d 'One line for Claude Code\'s status bar: model, session, today and block costs, burn rate, context'
complete -c insights -n "__fish_insights_needs_command" -a "store" -d 'Keep every event in an SQLite database, each exactly once'
complete -c insights -n "__fish_insights_needs_command" -a "export" -d 'Write the events for an engine a fleet runs: ClickHouse rows, OpenTelemetry traces'
complete -c insights -n "__fish_insights_needs_command" -a "completions" -d 'Print a completion script for a shell (bash, zsh, fish, elvish, powershell)'
complete -c insights -n "__fish_insights_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c insights -n "__fish_insights_using_subcommand convert" -l from -d 'The provider of the input, or `auto` to detect it line by line' -r -f -a "auto\t'Detect the provider of each line by its shape'
qwen\t'Qwen Code stream-json (--output-format stream-json); Claude-compatible'
amp\t'Amp --execute --stream-json; Claude-compatible'
cursor\t'Cursor Agent stream-json (cursor-agent -p --output-format stream-json)'
opencode\t'OpenCode run --format json'
claude\t'Claude Code stream-json (-p --output-format stream-json --verbose), SDK control protocol'
codex\t'Codex: exec --json, app-server JSON-RPC v2 (client tee too), legacy codex/event'
gemini\t'Gemini CLI stream-json (-p --output-format stream-json)'
aceclaw\t'AceClaw daemon JSON-RPC notifications (stream.*, permission.*), or its WebSocket bridge'
acp\t'ACP (Agent Client Protocol) JSON-RPC: an agent\'s output, or both directions'"
complete -c insights -n "__fish_insights_using_subcommand convert" -l compat -d 'Restrict output to a consumer\'s event types' -r -f -a "cc-insights\t'Only the 17 event types of CC-Insights; additions folded or dropped'"
complete -c insights -n "__fish_insights_using_subcommand convert" -l max-line-bytes -d 'Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and skipped' -r
complete -c insights -n "__fish_insights_using_subcommand convert" -s j -l jobs -d 'Convert on N threads; the output is the same, byte for byte' -r
complete -c insights -n "__fish_insights_using_subcommand convert" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand convert" -l raw -d 'Attach the original input line to every event as `raw`'
complete -c insights -n "__fish_insights_using_subcommand convert" -l no-timestamp -d 'Omit `timestamp` where the input line carries no time of its own'
complete -c insights -n "__fish_insights_using_subcommand convert" -l turn-ids -d 'Name the turn of every event of a turn (`turnId`, the adapter contract\'s run id)'
complete -c insights -n "__fish_insights_using_subcommand convert" -l line-buffered -d 'Flush standard output after every input line'
complete -c insights -n "__fish_insights_using_subcommand convert" -l block-buffered -d 'Flush standard output only when its buffer (64 KiB) is full and at the end'
complete -c insights -n "__fish_insights_using_subcommand convert" -l strict -d 'Stop with status 1 at the first input line that cannot be read'
complete -c insights -n "__fish_insights_using_subcommand convert" -l redact -d 'Mask secrets in every string of the output, `raw` included, as `[REDACTED:KIND]`'
complete -c insights -n "__fish_insights_using_subcommand convert" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand validate" -l from -d 'The provider of raw input, or `auto` to detect it line by line (normalized InsightsEvent lines are always recognised)' -r -f -a "auto\t'Detect the provider of each line by its shape'
qwen\t'Qwen Code stream-json (--output-format stream-json); Claude-compatible'
amp\t'Amp --execute --stream-json; Claude-compatible'
cursor\t'Cursor Agent stream-json (cursor-agent -p --output-format stream-json)'
opencode\t'OpenCode run --format json'
claude\t'Claude Code stream-json (-p --output-format stream-json --verbose), SDK control protocol'
codex\t'Codex: exec --json, app-server JSON-RPC v2 (client tee too), legacy codex/event'
gemini\t'Gemini CLI stream-json (-p --output-format stream-json)'
aceclaw\t'AceClaw daemon JSON-RPC notifications (stream.*, permission.*), or its WebSocket bridge'
acp\t'ACP (Agent Client Protocol) JSON-RPC: an agent\'s output, or both directions'"
complete -c insights -n "__fish_insights_using_subcommand validate" -l max-line-bytes -d 'Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and skipped' -r
complete -c insights -n "__fish_insights_using_subcommand validate" -l format -d 'How to report: text (`file:line: level: rule: message`), json (one document) or github (GitHub Actions annotations)' -r -f -a "text\t'One line per finding, `FILE:LINE[:COLUMN]: LEVEL: RULE: MESSAGE`, then the conversion totals and a summary line; coloured on a terminal (see --color)'
json\t'One JSON document: per log the counts, the conversion and every finding, then the totals'
github\t'GitHub Actions workflow commands: `::error` or `::warning`, then `file=FILE,line=LINE`, `,col=COLUMN` when known, and `,title=RULE::MESSAGE`'"
complete -c insights -n "__fish_insights_using_subcommand validate" -l deny -d 'Report the findings of a warning rule as errors; `warnings` means every warning rule. Repeatable' -r -f -a "warnings\t''
unreadable-line\t''
schema\t''
too-deep\t''
seq-order\t''
id-unique\t''
session-init-first\t''
tool-unknown-call\t''
tool-invoked-twice\t''
tool-completed-twice\t''
tool-open-at-end\t''
permission-unknown-request\t''
permission-answered-twice\t''
permission-unanswered\t''
subagent-unknown\t''
subagent-completed-twice\t''
subagent-open-at-end\t''
turn-unstarted\t''
turn-open-at-end\t''
diff-unified\t''
session-init-anonymous\t''
stream-unfinished\t''
stream-open-at-end\t''
raw-event\t''
mostly-raw\t''"
complete -c insights -n "__fish_insights_using_subcommand validate" -l allow -d 'Silence a rule: its findings are neither reported nor counted; `warnings` silences every warning rule. Repeatable. Wins over --deny' -r -f -a "warnings\t''
unreadable-line\t''
schema\t''
too-deep\t''
seq-order\t''
id-unique\t''
session-init-first\t''
tool-unknown-call\t''
tool-invoked-twice\t''
tool-completed-twice\t''
tool-open-at-end\t''
permission-unknown-request\t''
permission-answered-twice\t''
permission-unanswered\t''
subagent-unknown\t''
subagent-completed-twice\t''
subagent-open-at-end\t''
turn-unstarted\t''
turn-open-at-end\t''
diff-unified\t''
session-init-anonymous\t''
stream-unfinished\t''
stream-open-at-end\t''
raw-event\t''
mostly-raw\t''"
complete -c insights -n "__fish_insights_using_subcommand validate" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand validate" -l allow-empty -d 'Accept having nothing to check: a directory without `*.jsonl` files, or inputs without a line'
complete -c insights -n "__fish_insights_using_subcommand validate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand replay" -l from -d 'The provider of raw input, or `auto` to detect it line by line (normalized InsightsEvent lines are always recognised)' -r -f -a "auto\t'Detect the provider of each line by its shape'
qwen\t'Qwen Code stream-json (--output-format stream-json); Claude-compatible'
amp\t'Amp --execute --stream-json; Claude-compatible'
cursor\t'Cursor Agent stream-json (cursor-agent -p --output-format stream-json)'
opencode\t'OpenCode run --format json'
claude\t'Claude Code stream-json (-p --output-format stream-json --verbose), SDK control protocol'
codex\t'Codex: exec --json, app-server JSON-RPC v2 (client tee too), legacy codex/event'
gemini\t'Gemini CLI stream-json (-p --output-format stream-json)'
aceclaw\t'AceClaw daemon JSON-RPC notifications (stream.*, permission.*), or its WebSocket bridge'
acp\t'ACP (Agent Client Protocol) JSON-RPC: an agent\'s output, or both directions'"
complete -c insights -n "__fish_insights_using_subcommand replay" -l max-line-bytes -d 'Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and skipped' -r
complete -c insights -n "__fish_insights_using_subcommand replay" -l db -d 'Read the events from an insights store (`insights store`) instead of FILEs: those of --session, else all, in the order they were stored. Without a value, the default store ($XDG_DATA_HOME/insights/insights.db, else ~/.local/share/insights/insights.db)' -r -F
complete -c insights -n "__fish_insights_using_subcommand replay" -l session -d 'With --db: only the events of this session (its sessionId, as `insights sessions --db` lists them)' -r
complete -c insights -n "__fish_insights_using_subcommand replay" -l format -d 'Output format: terminal, markdown or html' -r -f -a "terminal\t'Laid out for a terminal, coloured per --color'
markdown\t'Markdown for issues and pull requests: prompts quoted, outputs and diffs in fenced code blocks, thinking in a collapsed `<details>`, no colour'
html\t'One self-contained HTML page (inline CSS, no script, nothing fetched): a summary of the sessions at the top, tool calls whose output folds open, coloured diffs, folded thinking, subagents indented under their call; everything the agent or a tool wrote is escaped'"
complete -c insights -n "__fish_insights_using_subcommand replay" -l width -d 'Columns to lay the transcript out in (at least 20)' -r
complete -c insights -n "__fish_insights_using_subcommand replay" -l speed -d 'Replay with the recorded pauses between timestamps, N times as fast' -r
complete -c insights -n "__fish_insights_using_subcommand replay" -l max-gap -d 'The longest pause --speed makes, in seconds' -r
complete -c insights -n "__fish_insights_using_subcommand replay" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand replay" -l thinking -d 'Show thinking in full, not folded to one dimmed line'
complete -c insights -n "__fish_insights_using_subcommand replay" -l full -d 'Show tool output, diffs, long commands and summaries in full, not cut after a few lines'
complete -c insights -n "__fish_insights_using_subcommand replay" -l follow -d 'Keep reading the last FILE as it grows, like `tail -f` (stop with Ctrl-C); with --db, keep reading the events stored (a live `... | insights store -`), looking every 100 ms'
complete -c insights -n "__fish_insights_using_subcommand replay" -l redact -d 'Mask secrets (API keys, tokens, passwords) as `[REDACTED:KIND]` before they are shown, as `insights --redact` does in events: for a transcript to share'
complete -c insights -n "__fish_insights_using_subcommand replay" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand reduce" -l from -d 'The provider of raw input, or `auto` to detect it line by line (normalized InsightsEvent lines are always recognised)' -r -f -a "auto\t'Detect the provider of each line by its shape'
qwen\t'Qwen Code stream-json (--output-format stream-json); Claude-compatible'
amp\t'Amp --execute --stream-json; Claude-compatible'
cursor\t'Cursor Agent stream-json (cursor-agent -p --output-format stream-json)'
opencode\t'OpenCode run --format json'
claude\t'Claude Code stream-json (-p --output-format stream-json --verbose), SDK control protocol'
codex\t'Codex: exec --json, app-server JSON-RPC v2 (client tee too), legacy codex/event'
gemini\t'Gemini CLI stream-json (-p --output-format stream-json)'
aceclaw\t'AceClaw daemon JSON-RPC notifications (stream.*, permission.*), or its WebSocket bridge'
acp\t'ACP (Agent Client Protocol) JSON-RPC: an agent\'s output, or both directions'"
complete -c insights -n "__fish_insights_using_subcommand reduce" -l max-line-bytes -d 'Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and skipped' -r
complete -c insights -n "__fish_insights_using_subcommand reduce" -l db -d 'Read the events from an insights store (`insights store`) instead of FILEs: those of --session, else all, in the order they were stored. Without a value, the default store ($XDG_DATA_HOME/insights/insights.db, else ~/.local/share/insights/insights.db)' -r -F
complete -c insights -n "__fish_insights_using_subcommand reduce" -l session -d 'With --db: only the events of this session (its sessionId, as `insights sessions --db` lists them)' -r
complete -c insights -n "__fish_insights_using_subcommand reduce" -l view -d 'What to print: `state` (JSON) or `summary` (a table per session)' -r -f -a "state\t'The state as JSON (the default)'
summary\t'A table per session: each turn\'s status, tool calls, tokens, cost and duration, the session\'s totals, context use and what is pending'"
complete -c insights -n "__fish_insights_using_subcommand reduce" -l from-state -d 'Continue from a state `insights reduce` wrote: events it applied (by `id`) are skipped' -r -F
complete -c insights -n "__fish_insights_using_subcommand reduce" -l at -d 'Reduce only the events up to this `seq`; reading stops at the first later one' -r
complete -c insights -n "__fish_insights_using_subcommand reduce" -s j -l jobs -d 'Convert provider output on N threads while the state is built; the result is the same' -r
complete -c insights -n "__fish_insights_using_subcommand reduce" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand reduce" -l follow -d 'Print the state after every turn_complete, and at the end, instead of once'
complete -c insights -n "__fish_insights_using_subcommand reduce" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand providers" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand providers" -l json -d 'Print the matrix as a JSON array: one object per provider with its `name`, `about` and `capabilities`'
complete -c insights -n "__fish_insights_using_subcommand providers" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand run" -l protocol -d 'The agent\'s protocol, when its command line does not make it clear: claude (the Agent SDK\'s stream-json control protocol), codex (`codex app-server`), acp (the Agent Client Protocol), or one-shot (started and converted; only interrupt and kill apply)' -r -f -a "claude\t''
codex\t''
acp\t''
one-shot\t''"
complete -c insights -n "__fish_insights_using_subcommand run" -l permissions -d 'What happens to a permission request no command answers: ask waits for a `permission_response` (and denies once standard input has ended), allow and deny answer at once, for unattended runs' -r -f -a "ask\t'Wait for a `permission_response`; once the commands have ended, deny'
allow\t'Allow it (once)'
deny\t'Deny it'"
complete -c insights -n "__fish_insights_using_subcommand run" -l prompt -d 'A first `send_message` with this text, before the commands on standard input' -r
complete -c insights -n "__fish_insights_using_subcommand run" -l log -d 'Write the lines of both directions to FILE as they pass, in order: a capture that `insights FILE` converts to the same events' -r -F
complete -c insights -n "__fish_insights_using_subcommand run" -l resume -d 'Continue the session ID: `claude --resume`, Codex `thread/resume`, ACP `session/load`' -r
complete -c insights -n "__fish_insights_using_subcommand run" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand run" -l no-timestamp -d 'Omit `timestamp` where the agent\'s line carries no time of its own (for comparisons)'
complete -c insights -n "__fish_insights_using_subcommand run" -l turn-ids -d 'Name the turn of every event of a turn (`turnId`), as `insights --turn-ids` does'
complete -c insights -n "__fish_insights_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand schema" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand schema" -l commands -d 'The commands\' schema (the same as `command`)'
complete -c insights -n "__fish_insights_using_subcommand schema" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand sessions" -l root -d 'Read the standard places under DIR instead of your home (another machine\'s home, a backup); repeat it to read several homes' -r -F
complete -c insights -n "__fish_insights_using_subcommand sessions" -l agent -d 'Only this agent (repeat or separate with commas); `insights usage --help` lists the agents read and where their files are' -r -f -a "claude\t'Claude Code: ~/.claude/projects, $XDG_CONFIG_HOME/claude/projects (CLAUDE_CONFIG_DIR)'
codex\t'Codex: ~/.codex/sessions, ~/.codex/archived_sessions (CODEX_HOME)'
gemini\t'Gemini CLI: ~/.gemini/tmp/*/chats'
qwen\t'Qwen Code: ~/.qwen/projects/*/chats and */subagents'
opencode\t'OpenCode: ~/.local/share/opencode/opencode.db (XDG_DATA_HOME)'
amp\t'Amp: ~/.local/share/amp/threads/*.json (AMP_DATA_DIR)'
pi\t'pi: ~/.pi/agent/sessions/*/*.jsonl (PI_AGENT_DIR)'
kimi\t'Kimi Code CLI: ~/.kimi/sessions/*/*/wire.jsonl (KIMI_DATA_DIR)'
kilo\t'Kilo: ~/.local/share/kilo/kilo.db (KILO_DATA_DIR)'
goose\t'Goose: ~/.local/share/goose/sessions/sessions.db (GOOSE_PATH_ROOT)'
droid\t'Droid: ~/.factory/sessions/**/*.settings.json (DROID_SESSIONS_DIR)'
openclaw\t'OpenClaw: ~/.openclaw (also ~/.clawdbot, ~/.moltbot, ~/.moldbot), **/*.jsonl (OPENCLAW_DIR)'
hermes\t'Hermes Agent: ~/.hermes/state.db (HERMES_HOME)'
copilot\t'GitHub Copilot CLI: ~/.copilot/otel/*.jsonl, OpenTelemetry export (COPILOT_OTEL_FILE_EXPORTER_PATH)'
codebuff\t'Codebuff: ~/.config/manicode*/projects/*/chats/*/chat-messages.json (CODEBUFF_DATA_DIR)'"
complete -c insights -n "__fish_insights_using_subcommand sessions" -l since -d 'Only what happened on or after this day (YYYY-MM-DD or YYYYMMDD, in --tz)' -r
complete -c insights -n "__fish_insights_using_subcommand sessions" -l until -d 'Only what happened on or before this day (YYYY-MM-DD or YYYYMMDD, in --tz)' -r
complete -c insights -n "__fish_insights_using_subcommand sessions" -l project -d 'Only projects whose directory contains TEXT' -r
complete -c insights -n "__fish_insights_using_subcommand sessions" -l tz -l timezone -d 'The time zone of days, weeks and months: local (the default: TZ, else /etc/localtime), UTC, an offset such as +09:00, or a name from /usr/share/zoneinfo such as Europe/Paris' -r
complete -c insights -n "__fish_insights_using_subcommand sessions" -l prices -d 'Prices to use over the shipped table, model by model (data/prices.json\'s shape)' -r -F
complete -c insights -n "__fish_insights_using_subcommand sessions" -s j -l jobs -d 'Threads reading files (default: one per core)' -r
complete -c insights -n "__fish_insights_using_subcommand sessions" -l db -d 'Answer from an insights store (`insights store`) instead of reading the files: the same output, from what was stored. Without a value, the default store ($XDG_DATA_HOME/insights/insights.db, else ~/.local/share/insights/insights.db)' -r -F
complete -c insights -n "__fish_insights_using_subcommand sessions" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand sessions" -l json -d 'Write JSON instead of a table'
complete -c insights -n "__fish_insights_using_subcommand sessions" -l allow-empty -d 'Accept finding nothing: exit 0 when the places read hold no session with usage'
complete -c insights -n "__fish_insights_using_subcommand sessions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand usage" -l by -d 'Group by these keys, in order (separate with commas): day, week (its Monday), month, session, model, project (the working directory), agent; or block alone' -r -f -a "day\t''
week\t''
month\t''
session\t''
model\t''
project\t''
agent\t''
block\t'Billing blocks (`--block-hours`); stands alone'"
complete -c insights -n "__fish_insights_using_subcommand usage" -l block-hours -d 'The length of a billing block, in hours (--by block)' -r
complete -c insights -n "__fish_insights_using_subcommand usage" -l order -d 'The order of the rows: asc (oldest, or first by key, first) or desc' -r -f -a "asc\t''
desc\t''"
complete -c insights -n "__fish_insights_using_subcommand usage" -l root -d 'Read the standard places under DIR instead of your home (another machine\'s home, a backup); repeat it to read several homes' -r -F
complete -c insights -n "__fish_insights_using_subcommand usage" -l agent -d 'Only this agent (repeat or separate with commas); `insights usage --help` lists the agents read and where their files are' -r -f -a "claude\t'Claude Code: ~/.claude/projects, $XDG_CONFIG_HOME/claude/projects (CLAUDE_CONFIG_DIR)'
codex\t'Codex: ~/.codex/sessions, ~/.codex/archived_sessions (CODEX_HOME)'
gemini\t'Gemini CLI: ~/.gemini/tmp/*/chats'
qwen\t'Qwen Code: ~/.qwen/projects/*/chats and */subagents'
opencode\t'OpenCode: ~/.local/share/opencode/opencode.db (XDG_DATA_HOME)'
amp\t'Amp: ~/.local/share/amp/threads/*.json (AMP_DATA_DIR)'
pi\t'pi: ~/.pi/agent/sessions/*/*.jsonl (PI_AGENT_DIR)'
kimi\t'Kimi Code CLI: ~/.kimi/sessions/*/*/wire.jsonl (KIMI_DATA_DIR)'
kilo\t'Kilo: ~/.local/share/kilo/kilo.db (KILO_DATA_DIR)'
goose\t'Goose: ~/.local/share/goose/sessions/sessions.db (GOOSE_PATH_ROOT)'
droid\t'Droid: ~/.factory/sessions/**/*.settings.json (DROID_SESSIONS_DIR)'
openclaw\t'OpenClaw: ~/.openclaw (also ~/.clawdbot, ~/.moltbot, ~/.moldbot), **/*.jsonl (OPENCLAW_DIR)'
hermes\t'Hermes Agent: ~/.hermes/state.db (HERMES_HOME)'
copilot\t'GitHub Copilot CLI: ~/.copilot/otel/*.jsonl, OpenTelemetry export (COPILOT_OTEL_FILE_EXPORTER_PATH)'
codebuff\t'Codebuff: ~/.config/manicode*/projects/*/chats/*/chat-messages.json (CODEBUFF_DATA_DIR)'"
complete -c insights -n "__fish_insights_using_subcommand usage" -l since -d 'Only what happened on or after this day (YYYY-MM-DD or YYYYMMDD, in --tz)' -r
complete -c insights -n "__fish_insights_using_subcommand usage" -l until -d 'Only what happened on or before this day (YYYY-MM-DD or YYYYMMDD, in --tz)' -r
complete -c insights -n "__fish_insights_using_subcommand usage" -l project -d 'Only projects whose directory contains TEXT' -r
complete -c insights -n "__fish_insights_using_subcommand usage" -l tz -l timezone -d 'The time zone of days, weeks and months: local (the default: TZ, else /etc/localtime), UTC, an offset such as +09:00, or a name from /usr/share/zoneinfo such as Europe/Paris' -r
complete -c insights -n "__fish_insights_using_subcommand usage" -l prices -d 'Prices to use over the shipped table, model by model (data/prices.json\'s shape)' -r -F
complete -c insights -n "__fish_insights_using_subcommand usage" -s j -l jobs -d 'Threads reading files (default: one per core)' -r
complete -c insights -n "__fish_insights_using_subcommand usage" -l db -d 'Answer from an insights store (`insights store`) instead of reading the files: the same output, from what was stored. Without a value, the default store ($XDG_DATA_HOME/insights/insights.db, else ~/.local/share/insights/insights.db)' -r -F
complete -c insights -n "__fish_insights_using_subcommand usage" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand usage" -l active -d 'Only the active block (--by block): the one in progress, if there is one'
complete -c insights -n "__fish_insights_using_subcommand usage" -l breakdown -d 'Under each row, a row per model: its tokens and cost (JSON: `breakdown`, a list of them in each row)'
complete -c insights -n "__fish_insights_using_subcommand usage" -l compact -d 'A narrower table: the keys, input, output, total tokens and cost (for screenshots and narrow terminals). JSON is unchanged'
complete -c insights -n "__fish_insights_using_subcommand usage" -l json -d 'Write JSON instead of a table'
complete -c insights -n "__fish_insights_using_subcommand usage" -l allow-empty -d 'Accept finding nothing: exit 0 when the places read hold no session with usage'
complete -c insights -n "__fish_insights_using_subcommand usage" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand statusline" -l cost-source -d 'The session\'s cost from: auto (Claude Code\'s `cost.total_cost_usd`, else counted from the session files), claude (Claude Code\'s only), insights (counted only)' -r -f -a "auto\t''
claude\t''
insights\t''"
complete -c insights -n "__fish_insights_using_subcommand statusline" -l block-hours -d 'The length of a billing block, in hours' -r
complete -c insights -n "__fish_insights_using_subcommand statusline" -l tz -l timezone -d 'The time zone of "today" (as `usage --tz`)' -r
complete -c insights -n "__fish_insights_using_subcommand statusline" -l root -d 'Read the standard places under DIR instead of your home (as `usage --root`)' -r -F
complete -c insights -n "__fish_insights_using_subcommand statusline" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand statusline" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand store" -l db -d 'The database; created, with its folder, when it does not exist' -r -F
complete -c insights -n "__fish_insights_using_subcommand store" -l from -d 'The provider of raw input, or `auto` to detect it line by line (as for `convert`)' -r -f -a "auto\t'Detect the provider of each line by its shape'
qwen\t'Qwen Code stream-json (--output-format stream-json); Claude-compatible'
amp\t'Amp --execute --stream-json; Claude-compatible'
cursor\t'Cursor Agent stream-json (cursor-agent -p --output-format stream-json)'
opencode\t'OpenCode run --format json'
claude\t'Claude Code stream-json (-p --output-format stream-json --verbose), SDK control protocol'
codex\t'Codex: exec --json, app-server JSON-RPC v2 (client tee too), legacy codex/event'
gemini\t'Gemini CLI stream-json (-p --output-format stream-json)'
aceclaw\t'AceClaw daemon JSON-RPC notifications (stream.*, permission.*), or its WebSocket bridge'
acp\t'ACP (Agent Client Protocol) JSON-RPC: an agent\'s output, or both directions'"
complete -c insights -n "__fish_insights_using_subcommand store" -l max-line-bytes -d 'Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and skipped' -r
complete -c insights -n "__fish_insights_using_subcommand store" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand store" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand export" -l to -d 'The target: `clickhouse` or `otlp`' -r -f -a "clickhouse\t'JSONEachRow rows for the `events` table of schemas/clickhouse.sql, on standard output'
otlp\t'OpenTelemetry GenAI traces (OTLP)'"
complete -c insights -n "__fish_insights_using_subcommand export" -l db -d 'Read the events `insights store` kept in this database instead, only those no earlier export to the same target took' -r -F
complete -c insights -n "__fish_insights_using_subcommand export" -l from -d 'The provider of raw input, or `auto` to detect it line by line (as for `convert`)' -r -f -a "auto\t'Detect the provider of each line by its shape'
qwen\t'Qwen Code stream-json (--output-format stream-json); Claude-compatible'
amp\t'Amp --execute --stream-json; Claude-compatible'
cursor\t'Cursor Agent stream-json (cursor-agent -p --output-format stream-json)'
opencode\t'OpenCode run --format json'
claude\t'Claude Code stream-json (-p --output-format stream-json --verbose), SDK control protocol'
codex\t'Codex: exec --json, app-server JSON-RPC v2 (client tee too), legacy codex/event'
gemini\t'Gemini CLI stream-json (-p --output-format stream-json)'
aceclaw\t'AceClaw daemon JSON-RPC notifications (stream.*, permission.*), or its WebSocket bridge'
acp\t'ACP (Agent Client Protocol) JSON-RPC: an agent\'s output, or both directions'"
complete -c insights -n "__fish_insights_using_subcommand export" -l max-line-bytes -d 'Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and skipped' -r
complete -c insights -n "__fish_insights_using_subcommand export" -l endpoint -d '`--to otlp`: send the spans as OTLP/HTTP protobuf to URL/v1/traces (a Collector\'s OTLP receiver, such as http://localhost:4318) instead of writing OTLP/JSON' -r
complete -c insights -n "__fish_insights_using_subcommand export" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand export" -l all -d 'With --db: every stored event, not only those stored since the last export to the target (after a load that failed downstream); the cursor then moves to the end'
complete -c insights -n "__fish_insights_using_subcommand export" -l content -d '`--to otlp`: include prompts, answers, tool arguments and results (the GenAI conventions\' opt-in content attributes); left out by default'
complete -c insights -n "__fish_insights_using_subcommand export" -l redact -d '`--to otlp`: mask secrets (API keys, tokens, passwords) in every string of the spans, as `insights --redact` does in events'
complete -c insights -n "__fish_insights_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand completions" -l color -d 'When to colour diagnostics and replay\'s transcript: auto, always, never' -r -f -a "auto\t'Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`'
always\t'Always colour'
never\t'Never colour: no escape sequence is written at all'"
complete -c insights -n "__fish_insights_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "convert" -d 'Convert provider output to InsightsEvent JSONL (what `insights` does without a command)'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "validate" -d 'Check event logs against the schema and the protocol\'s rules (for CI)'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "replay" -d 'Render a log or a live stream as a transcript for people'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "reduce" -d 'Fold an event log into state: entries, the turn tree, totals, what is pending'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "providers" -d 'Print what each provider\'s output carries: the capability matrix, as a table or JSON'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "run" -d 'Drive an agent: commands on standard input, events of both directions on standard output'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "schema" -d 'Print a JSON Schema (draft 2020-12): of the events (the default), of reduce\'s state or of the commands'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "sessions" -d 'List the sessions in the agents\' own session files: agent, id, project, times, turns, models, tokens, cost'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "usage" -d 'Sum tokens and cost from the agents\' own session files, grouped by day, model, …'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "statusline" -d 'One line for Claude Code\'s status bar: model, session, today and block costs, burn rate, context'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "store" -d 'Keep every event in an SQLite database, each exactly once'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "export" -d 'Write the events for an engine a fleet runs: ClickHouse rows, OpenTelemetry traces'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "completions" -d 'Print a completion script for a shell (bash, zsh, fish, elvish, powershell)'
complete -c insights -n "__fish_insights_using_subcommand help; and not __fish_seen_subcommand_from convert validate replay reduce providers run schema sessions usage statusline store export completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
