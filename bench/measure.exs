defmodule RustyJson.Bench.Measure do
  @moduledoc false
  # Memory and reductions for one call, each measured in a fresh process so earlier garbage does not count.

  @doc """
  BEAM memory as the published RustyJson 0.3.10 measures it: the `:erlang.memory(:total)` delta across one call,
  in a fresh process, with the result still referenced. The median of `runs` measurements, in bytes.
  """
  def beam_memory(fun, runs \\ 5) do
    1..runs
    |> Enum.map(fn _ ->
      in_fresh_process(fn ->
        :erlang.garbage_collect()
        before = :erlang.memory(:total)
        result = fun.()
        delta = :erlang.memory(:total) - before
        # Keep the result alive until after the measurement.
        _ = :erlang.phash2(result, 1)
        delta
      end)
    end)
    |> median()
  end

  @doc "Reductions per call, over `n` calls in a fresh process."
  def reductions(fun, n) do
    in_fresh_process(fn ->
      fun.()
      {:reductions, r0} = Process.info(self(), :reductions)
      for _ <- 1..n, do: fun.()
      {:reductions, r1} = Process.info(self(), :reductions)
      div(r1 - r0, n)
    end)
  end

  @doc """
  Native memory of RustyJson for one call: the peak of bytes held by the NIF's allocator (a counting wrapper
  around mimalloc) above what it held before the call. nil when the NIF has no counter.
  """
  def native_peak(fun) do
    if function_exported?(RustyJson.Native, :allocator_reset_peak, 0) do
      in_fresh_process(fn ->
        base = RustyJson.Native.allocator_reset_peak()
        _ = fun.()
        RustyJson.Native.allocator_peak() - base
      end)
    end
  end

  defp in_fresh_process(fun) do
    task = Task.async(fun)
    Task.await(task, :infinity)
  end

  defp median(list), do: list |> Enum.sort() |> Enum.at(div(length(list), 2))
end
