defmodule RustyJson.SoakTest do
  # The short CI version of the memory soak (`make soak` runs 100,000 calls and prints the figures): 12,000
  # encode and decode calls of mixed generated documents (the largest 375 KB, so decodes and long encodes run on
  # dirty schedulers too) in 4 processes, in a child VM so the RSS is this workload's alone. After a warm-up
  # (allocators and the NIF's per-thread stacks at their working size) the figures must stay put. A leak of
  # 1 KB per call adds 12 MB over these calls: the BEAM's own counts (binaries, resources, enif_alloc: all in
  # `:erlang.memory/0`) and the NIF allocator's count (everything Rust allocates) are exact, so their
  # tolerances are set just above the noise measured between checkpoints (about 2 MB for the total, 0 for
  # binaries, tens of KB for the NIF). The RSS also moves by up to 8 MB as the VM's and mimalloc's free
  # memory caches grow and shrink, so its bound (16 MB) only catches leaks outside those counts above about
  # 1.4 KB per call.
  use ExUnit.Case, async: true

  alias RustyJson.ChildVM

  @moduletag timeout: 300_000

  @calls 12_000
  @mib 1_048_576

  test "BEAM memory, RSS and the NIF's allocator settle over #{@calls} calls in 4 processes" do
    {output, status} =
      ChildVM.run("""
      r = RustyJson.Soak.run(calls: #{@calls}, warmup: 2_000, procs: 4, checkpoints: 4, shared: nil, large: 1500,
            log: &IO.puts/1)
      s = fn p -> Enum.map_join([:calls, :total, :binary, :rss, :native], " ", &Integer.to_string(Map.fetch!(p, &1))) end
      IO.puts("WARM " <> s.(r.warmup))
      for p <- r.checkpoints, do: IO.puts("POINT " <> s.(p))
      """)

    assert status == 0, output
    [warm] = figures(output, "WARM")
    points = figures(output, "POINT")
    assert length(points) == 4, output
    last = List.last(points)
    assert last.calls == 2_000 + @calls

    growth = fn key -> last[key] - warm[key] end
    assert growth.(:binary) < 2 * @mib, output
    assert growth.(:total) < 6 * @mib, output
    assert growth.(:rss) < 16 * @mib, output

    # Native: only the per-scheduler-thread parser and walk stacks are kept between calls, sized by the
    # largest document seen; a leak of one output buffer or term stack per call would be megabytes.
    assert growth.(:native) < 256 * 1024, output
  end

  defp figures(output, tag) do
    # (The native count starts at the first sample, so it can read below zero when earlier buffers are freed.)
    for [_, line] <- Regex.scan(~r/^#{tag} ([-\d ]+)$/m, output) do
      [calls, total, binary, rss, native] =
        line |> String.split() |> Enum.map(&String.to_integer/1)

      %{calls: calls, total: total, binary: binary, rss: rss, native: native}
    end
  end
end
