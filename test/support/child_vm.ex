defmodule RustyJson.ChildVM do
  @moduledoc false
  # Runs Elixir code in a separate OS process: a fresh VM with this build's code path. A crash of the code under
  # test (a segfault, a stack overflow in native code) is then reported as a failed result instead of taking the
  # test run down with it.

  @doc """
  Evaluates `code` in a child VM; returns `{output, exit_status}`. The child is killed after `timeout_s` seconds
  (exit status 124).
  """
  @spec run(String.t(), pos_integer()) :: {String.t(), non_neg_integer()}
  def run(code, timeout_s \\ 300) do
    System.cmd("timeout", ["#{timeout_s}", "elixir" | paths()] ++ ["-e", code],
      stderr_to_stdout: true
    )
  end

  @doc """
  Like `run/2`, with the child's address space limited to `limit_kb` kilobytes (`ulimit -v`): an allocation past
  it fails in the child (a Rust abort, the VM's "Cannot allocate") instead of the machine swapping or the OOM
  killer choosing a victim. The VM's crash dump is switched off: the "Cannot allocate" line and the exit status
  say enough, and a dump of a VM holding gigabytes takes long to write.

  OTP 25, 27 and 29 start under 4 GB with no flag (OTP 25 reserves a 1 GB literal super carrier: under
  `ulimit -v 1000000` it fails with "erts_mmap: Failed to create super carrier"). A VM that reserves more can be
  given flags such as a smaller `+MIscs` or `+MMscs` through `RUSTYJSON_CHILD_ERL_FLAGS` (passed as `--erl`).
  """
  @spec run_limited(String.t(), pos_integer(), pos_integer()) :: {String.t(), non_neg_integer()}
  def run_limited(code, timeout_s, limit_kb \\ 4_000_000) do
    erl = System.get_env("RUSTYJSON_CHILD_ERL_FLAGS", "")
    erl_args = if erl == "", do: [], else: ["--erl", erl]
    # The arguments go through "$@": nothing of the code is quoted by the shell.
    script = ~s(ulimit -v #{limit_kb} && exec timeout #{timeout_s} elixir "$@")

    System.cmd("sh", ["-c", script, "sh" | erl_args ++ paths() ++ ["-e", code]],
      stderr_to_stdout: true,
      env: [{"ERL_CRASH_DUMP_SECONDS", "0"}]
    )
  end

  defp paths do
    :code.get_path()
    |> Enum.map(&to_string/1)
    |> Enum.filter(&String.contains?(&1, "/_build/"))
    |> Enum.flat_map(&["-pa", &1])
  end
end
