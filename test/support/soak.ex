defmodule RustyJson.Soak do
  @moduledoc false
  # Memory soak: many encode and decode calls of mixed documents (every path: small and large, both schedulers,
  # an encode that moves to a dirty scheduler mid-way, options, holes filled by Elixir, errors) in several
  # processes at once, with the memory figures sampled after a warm-up and at checkpoints after it. Before each
  # sample the workers have exited and every process is garbage collected, so what remains is what the calls
  # left behind. Used by `bench/soak.exs` (`make soak`, 100,000 calls) and by the short CI run in
  # test/rusty_json/soak_test.exs (in a child VM, so the RSS is this workload's alone).

  @type sample :: %{
          calls: non_neg_integer(),
          total: non_neg_integer(),
          binary: non_neg_integer(),
          rss: non_neg_integer() | nil,
          native: integer()
        }

  @shared_docs ~w(canada citm_catalog twitter github_events mesh update-center twitterescaped)

  @doc """
  Runs the soak and returns `%{warmup: sample, checkpoints: [sample], cases: n, docs: [name]}`.

  Options: `:calls` (after the warm-up, in total over all processes), `:warmup` (calls, in total), `:procs`,
  `:checkpoints` (samples after the warm-up), `:shared` (directory of public documents; nil for none),
  `:large` (the element count of the largest generated document, an API-style list of about 250 bytes per
  element; default 6000, 1.5 MB), `:log` (a function called with each line of progress).
  """
  def run(opts) do
    procs = Keyword.get(opts, :procs, 4)
    calls = Keyword.fetch!(opts, :calls)
    warmup = Keyword.fetch!(opts, :warmup)
    checkpoints = Keyword.get(opts, :checkpoints, 4)
    log = Keyword.get(opts, :log, fn _ -> :ok end)

    docs = docs(Keyword.get(opts, :shared), Keyword.get(opts, :large, 6000))
    cases = cases(docs)

    # The cases are kept as literals: workers then copy nothing when they start, and a GC never copies them.
    :persistent_term.put({__MODULE__, :cases}, List.to_tuple(cases))

    log.(
      "#{length(docs)} documents (#{Enum.map_join(docs, ", ", &elem(&1, 0))}), #{length(cases)} cases"
    )

    baseline = sample(0)
    log.(line("start", baseline))
    run_calls(procs, warmup, 0)
    warm = sample(warmup)
    log.(line("after warm-up", warm))

    per_checkpoint = div(calls, checkpoints)

    points =
      for k <- 1..checkpoints do
        run_calls(procs, per_checkpoint, warmup + (k - 1) * per_checkpoint)
        s = sample(warmup + k * per_checkpoint)
        log.(line("checkpoint #{k}", s))
        s
      end

    :persistent_term.erase({__MODULE__, :cases})
    %{start: baseline, warmup: warm, checkpoints: points, cases: length(cases), docs: docs}
  end

  @doc "One line of figures."
  def line(label, s) do
    "#{String.pad_trailing(label, 14)} calls #{String.pad_leading(Integer.to_string(s.calls), 7)}  " <>
      "BEAM total #{mb(s.total)}  binary #{mb(s.binary)}  RSS #{mb(s.rss)}  NIF allocator #{kb(s.native)}"
  end

  def mb(nil), do: "n/a"
  def mb(b), do: :erlang.float_to_binary(b / 1_048_576, decimals: 1) <> " MiB"
  def kb(b), do: :erlang.float_to_binary(b / 1024, decimals: 1) <> " KiB"

  # Splits `n` calls over `procs` fresh processes (case i of the shared list for global call number i, so every
  # process goes through every case) and waits for all of them to exit.
  defp run_calls(procs, n, offset) do
    per = div(n, procs)

    1..procs
    |> Enum.map(fn p ->
      first = offset + (p - 1) * per

      Task.async(fn ->
        cases = :persistent_term.get({__MODULE__, :cases})
        loop(cases, tuple_size(cases), first, first + per)
      end)
    end)
    |> Enum.each(&Task.await(&1, :infinity))
  end

  defp loop(_cases, _n, i, stop) when i >= stop, do: :ok

  defp loop(cases, n, i, stop) do
    :ok = elem(cases, rem(i, n)).()
    loop(cases, n, i + 1, stop)
  end

  @doc """
  Garbage collects every process, then reads the figures; five times, 50 ms apart, keeping each figure's least.
  A binary freed by another scheduler than the one that allocated it is returned to that one's allocator only
  when it next runs (the VM's delayed deallocation), so one reading can count megabytes already freed; a leak
  shows in every reading.
  """
  def sample(calls) do
    readings =
      for attempt <- 1..5 do
        if attempt > 1, do: Process.sleep(50)
        for pid <- Process.list(), do: :erlang.garbage_collect(pid)

        %{
          total: :erlang.memory(:total),
          binary: :erlang.memory(:binary),
          rss: rss(),
          # Bytes the NIF's counting allocator holds now, counted from the first sample (the call starts the
          # count and restarts its peak).
          native: RustyJson.Native.allocator_reset_peak()
        }
      end

    least = fn key ->
      readings |> Enum.map(& &1[key]) |> Enum.reject(&is_nil/1) |> Enum.min(fn -> nil end)
    end

    %{
      calls: calls,
      total: least.(:total),
      binary: least.(:binary),
      rss: least.(:rss),
      native: least.(:native)
    }
  end

  @doc "The OS process's resident set size in bytes (Linux), or nil."
  def rss do
    with {:ok, status} <- File.read("/proc/self/status"),
         [_, kb] <- Regex.run(~r/VmRSS:\s+(\d+) kB/, status) do
      String.to_integer(kb) * 1024
    else
      _ -> nil
    end
  end

  # {name, json, term}: the public documents present in `shared`, and generated ones.
  defp docs(shared, large) do
    public =
      for name <- @shared_docs,
          shared,
          path = Path.join(shared, name <> ".json"),
          File.exists?(path) do
        json = File.read!(path)
        {name, json, RustyJson.decode!(json)}
      end

    generated = [
      {"api_list_50", api_list(50)},
      {"small_mixed", [1, "string", %{"a" => 1, "b" => 2}, [3, 4, 5], nil, true, -1.5e-7]},
      {"unicode", %{"é" => "ünïcödé \u2028 😀 <script>", "esc" => "tab\t\"q\" \\ \u0001"}},
      {"nested_200", Enum.reduce(1..200, [1], fn i, acc -> %{"l#{rem(i, 3)}" => acc} end)},
      {"numbers",
       Enum.map(1..500, &[&1 * 1_000_003, &1 / 7, -&1 * 1.0e300, Integer.pow(10, 30) + &1])}
    ]

    generated = generated ++ [{"api_list_#{large}", api_list(large)}]
    public ++ for({name, term} <- generated, do: {name, RustyJson.encode!(term), term})
  end

  # Every case is a function doing one call that must return :ok (a clean result or the expected error).
  defp cases(docs) do
    per_doc =
      Enum.flat_map(docs, fn {_name, json, term} ->
        cut = binary_part(json, 0, div(byte_size(json), 2))

        [
          fn -> ok(RustyJson.decode(json)) end,
          fn -> ok(RustyJson.encode(term)) end,
          fn -> ok(RustyJson.decode(json, keys: :intern, strings: :copy)) end,
          fn -> ok(RustyJson.decode(json, objects: :ordered_objects)) end,
          fn -> ok(RustyJson.encode(term, escape: :html_safe, maps: :strict)) end,
          fn -> ok(RustyJson.encode(term, pretty: true)) end,
          fn -> error(RustyJson.decode(cut), RustyJson.DecodeError) end,
          # A hole at the end: the native output so far is kept while Elixir fills it.
          fn -> ok(RustyJson.encode([term, RustyJson.Fragment.new(fn _ -> "1" end)])) end
        ]
      end)

    misc = [
      fn -> error(RustyJson.decode(<<"[\"a", 0xFF, "\"]">>), RustyJson.DecodeError) end,
      fn -> error(RustyJson.encode(["ok", <<0xC3>>]), RustyJson.EncodeError) end,
      fn -> error(RustyJson.encode(%{"a" => [1, {:tuple}]}), Protocol.UndefinedError) end,
      fn -> error(RustyJson.decode(String.duplicate("[", 5000)), RustyJson.DecodeError) end,
      fn -> ok(RustyJson.decode(~s({"a":1}), keys: :atoms!)) end,
      fn -> ok(RustyJson.encode(%{date: ~D[2026-11-22], at: ~U[2026-11-22 10:00:00.123Z]})) end,
      fn -> ok(RustyJson.encode(%RustyJson.OrderedObject{values: [{"b", 1}, {"a", [2]}]})) end,
      fn -> ok(RustyJson.Formatter.pretty_print(~s({"a":[1,2,{"b":null}]}))) end
    ]

    per_doc ++ misc
  end

  defp ok({:ok, _}), do: :ok
  defp ok(bin) when is_binary(bin), do: :ok
  defp ok(other), do: raise("expected a result, got #{inspect(other, limit: 5)}")

  defp error({:error, %kind{}}, kind), do: :ok

  defp error(other, kind),
    do: raise("expected a #{inspect(kind)}, got #{inspect(other, limit: 5)}")

  defp api_list(n) do
    for i <- 1..n do
      %{
        "id" => i,
        "name" => "User #{i}",
        "email" => "user#{i}@example.com",
        "active" => rem(i, 3) != 0,
        "score" => i * 1.25,
        "tags" => ["tag#{rem(i, 7)}", "tag#{rem(i, 11)}"],
        "address" => %{"city" => "City #{rem(i, 50)}", "geo" => [i / 7, -i / 9]},
        "note" => if(rem(i, 5) == 0, do: nil, else: "Línea #{i} — \"quoted\" text\n")
      }
    end
  end
end
