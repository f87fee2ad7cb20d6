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
    paths =
      :code.get_path()
      |> Enum.map(&to_string/1)
      |> Enum.filter(&String.contains?(&1, "/_build/"))
      |> Enum.flat_map(&["-pa", &1])

    System.cmd("timeout", ["#{timeout_s}", "elixir" | paths] ++ ["-e", code],
      stderr_to_stdout: true
    )
  end
end
