defmodule RustyJson.Bench.Harness do
  @moduledoc false
  # A small benchmark harness that needs nothing from hex. Libraries compared in one case are measured round by
  # round with their order shuffled each round, so machine drift hits all of them alike; each sample times a batch
  # of calls sized to last about `:batch_ms` (`:long_batch_ms` when one call takes `:long_call_us` or more), and the
  # result is the median (and spread) of per-call times. With `:max_rounds`, a case whose samples spread widely
  # gets more rounds (see `sample_rounds/6`). `compare_all/2` runs the rounds across several cases at once.
  #
  # Why long batches for slow calls: a 20 ms batch is 3 calls of a 6 ms library but 20 calls of a 1 ms one, and
  # a multi-MB result's allocations (page faults, collections) make such short batches bimodal: the median then
  # jumps between modes from run to run.

  @type result :: %{
          median_us: float(),
          p25_us: float(),
          p75_us: float(),
          samples: pos_integer(),
          rounds_us: [float()]
        }

  @doc "Times each `{label, fun}` interleaved; returns `%{label => result}`."
  @spec compare([{term(), (() -> term())}], keyword()) :: %{term() => result()}
  def compare(funs, opts \\ []), do: compare_all([{:case, funs}], opts).case

  @doc """
  Times several cases (each `{case, [{label, fun}]}`) round by round across all of them: a round takes one sample
  of every library of every case still running, cases and libraries in a shuffled order. So each case's samples
  are spread over the whole run, not gathered in one stretch of it, and a few minutes of a slower (or faster)
  machine weigh on every case alike. Returns `%{case => %{label => result}}`.
  """
  @spec compare_all([{term(), [{term(), (() -> term())}]}], keyword()) :: %{
          term() => %{term() => result()}
        }
  def compare_all(cases, opts \\ []) do
    rounds = Keyword.get(opts, :rounds, 15)
    batch_ms = Keyword.get(opts, :batch_ms, 20)
    long_batch_ms = Keyword.get(opts, :long_batch_ms, batch_ms)
    long_call_us = Keyword.get(opts, :long_call_us, 100)
    max_rounds = max(rounds, Keyword.get(opts, :max_rounds, rounds))
    spread = Keyword.get(opts, :spread, 0.1)
    progress = Keyword.get(opts, :progress, fn _round, _active -> :ok end)

    batches =
      for {id, funs} <- cases, into: %{} do
        sizes =
          Map.new(funs, fn {label, fun} ->
            # Warm up, then size a batch from the median of three timed calls (one call's time can be far off,
            # and the batch size must not depend on it: see `time_batch/2`).
            us = sizing_time(fun)
            ms = if us >= long_call_us, do: long_batch_ms, else: batch_ms
            {label, max(1, div(ms * 1000, max(us, 1)))}
          end)

        {id, sizes}
      end

    samples =
      sample_rounds(
        cases,
        batches,
        Map.new(cases, fn {id, _} -> {id, %{}} end),
        0,
        {rounds, max_rounds, spread},
        progress
      )

    Map.new(samples, fn {id, acc} ->
      {id, Map.new(acc, fn {label, times} -> {label, summarize(times)} end)}
    end)
  end

  # Rounds until `min` are done, then more (up to `max`) for the cases where some library's p25-p75 spread is
  # wider than `spread` of its median: a wide spread makes a 21-sample median move between runs, and more
  # samples steady it.
  defp sample_rounds(cases, batches, acc, done, {min, max, spread} = limits, progress) do
    active =
      Enum.filter(cases, fn {id, _} ->
        done < min or (done < max and not Enum.all?(acc[id], fn {_, t} -> narrow?(t, spread) end))
      end)

    if active == [] do
      acc
    else
      progress.(done + 1, length(active))

      acc =
        for {id, funs} <- Enum.shuffle(active), {label, fun} <- Enum.shuffle(funs), reduce: acc do
          acc ->
            n = batches[id][label]
            us = time_batch(fun, n)
            update_in(acc, [id, label], &[us / n | &1 || []])
        end

      sample_rounds(cases, batches, acc, done + 1, limits, progress)
    end
  end

  defp narrow?(times, spread) do
    %{median_us: m, p25_us: a, p75_us: b} = summarize(times)
    b - a <= spread * m
  end

  # The median of three calls after a warm-up, in a process of its own, like the samples: made here, a multi-GB
  # result (the streams bench's whole-array decode) would grow this process's heap, which holds every case's
  # inputs and is never collected while it waits for the samples.
  defp sizing_time(fun) do
    task =
      Task.async(fn ->
        fun.()
        [fun, fun, fun] |> Enum.map(&elem(:timer.tc(&1), 0)) |> Enum.sort() |> Enum.at(1)
      end)

    Task.await(task, :infinity)
  end

  # Each batch runs in a fresh process: the heap it starts from (and so the garbage collections it pays) does not
  # depend on what ran before, which keeps repeated runs comparable. One untimed call first grows that heap to
  # hold a result: timed from an empty heap, the first call of a multi-MB result costs up to 1.7x the next ones
  # (jiffy encoding same_shape_10000x10: 23 ms alone, 15 ms a call in batches of 5), so the per-call time
  # depended on how many calls a batch had, which the warm-up timing sets and which varied between runs.
  # Then a full collection and a minor one: the fresh process got a copy of the case's term (the closure's), and
  # until a collection has moved it to the old heap, the next collections copy it again. The 10 MB report's
  # encode paid that in its first timed call (47-62 ms against 33-40 ms for the calls after it, with batches of
  # 2-3 calls), so again the per-call time depended on the batch size.
  defp time_batch(fun, n) do
    parent = self()

    {pid, ref} =
      spawn_monitor(fn ->
        fun.()
        :erlang.garbage_collect()
        :erlang.garbage_collect(self(), type: :minor)
        start = System.monotonic_time(:nanosecond)
        repeat(fun, n)
        send(parent, {:batch_ns, self(), System.monotonic_time(:nanosecond) - start})
      end)

    receive do
      {:batch_ns, ^pid, ns} ->
        Process.demonitor(ref, [:flush])
        ns / 1000

      {:DOWN, ^ref, :process, ^pid, reason} ->
        raise "benchmark batch failed: #{inspect(reason)}"
    end
  end

  defp repeat(_fun, 0), do: :ok

  defp repeat(fun, n) do
    fun.()
    repeat(fun, n - 1)
  end

  # `times` is newest first; `rounds_us` keeps the samples in round order for `ratio/3`.
  defp summarize(times) do
    sorted = Enum.sort(times)

    %{
      median_us: pct(sorted, 0.5),
      p25_us: pct(sorted, 0.25),
      p75_us: pct(sorted, 0.75),
      samples: length(sorted),
      rounds_us: Enum.reverse(times)
    }
  end

  @doc """
  The time ratio `a / b` of two libraries of one case: the median over rounds of the ratio of their samples in
  that round. A round times a case's libraries one right after the other, so a stretch of slower machine (this
  VM has them: the same parse runs 1.6x slower for a second or more, then fast again) slows both samples of a
  pair alike, and the pair's ratio keeps the libraries' true ratio. The ratio of two medians instead moves
  whenever more of one library's samples than the other's fell in slow stretches.
  """
  @spec ratio(%{term() => result()}, term(), term()) :: float()
  def ratio(stats, a, b) do
    Enum.zip_with(stats[a].rounds_us, stats[b].rounds_us, &(&1 / &2))
    |> Enum.sort()
    |> pct(0.5)
  end

  defp pct(sorted, q), do: Enum.at(sorted, round(q * (length(sorted) - 1)))

  @doc "Formats microseconds for a table."
  @spec fmt_us(float()) :: String.t()
  def fmt_us(us) when us >= 1000, do: :erlang.float_to_binary(us / 1000, decimals: 2) <> " ms"
  def fmt_us(us), do: :erlang.float_to_binary(us / 1, decimals: 1) <> " µs"

  @doc "Formats a byte count."
  @spec fmt_bytes(non_neg_integer()) :: String.t()
  def fmt_bytes(b) when b >= 1_000_000,
    do: :erlang.float_to_binary(b / 1_000_000, decimals: 1) <> " MB"

  def fmt_bytes(b) when b >= 1_000, do: :erlang.float_to_binary(b / 1_000, decimals: 1) <> " KB"
  def fmt_bytes(b), do: "#{b} B"
end
