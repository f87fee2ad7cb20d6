defmodule RustyJson.Bench.BestOf do
  @moduledoc false
  # The best of `n` timings of `fun` (µs), in a fresh process after one warm-up call: for the A/B scripts that
  # compare two builds run alternately (bench/min_time.exs, bench/default_path_ab.exs).

  @spec run((() -> term()), pos_integer()) :: non_neg_integer()
  def run(fun, n) do
    parent = self()

    spawn(fn ->
      fun.()
      send(parent, {__MODULE__, Enum.min(for _ <- 1..n, do: elem(:timer.tc(fun), 0))})
    end)

    receive do
      {__MODULE__, us} -> us
    end
  end
end
