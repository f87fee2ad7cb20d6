# keys: :intern against the default keys, steady state: one process decodes each input again and again, the two
# options alternating in 100 ms chunks; the ratio is the median over rounds of the chunk pairs (intern / default),
# so a slow stretch of the machine slows both sides of a pair.
# Run: mix run bench/intern.exs   (ROUNDS=n, ONLY=a,b to keep inputs whose names contain a or b)
Code.require_file("../test/support/apt_libs.exs", __DIR__)
for file <- ~w(inputs suite), do: Code.require_file("#{file}.exs", __DIR__)
RustyJson.AptLibs.add_paths!([:jiffy])

alias RustyJson.Bench.{Inputs, Suite}

rounds = String.to_integer(System.get_env("ROUNDS", "11"))
only = System.get_env("ONLY")

# Arrays of wide same-shaped objects: keys that differ in one byte, more of them than the cache's first window.
wide = fn n, k ->
  Inputs.from_term("wide_#{n}x#{k}", for(i <- 1..n, do: Map.new(1..k, &{"field_#{&1}", i * &1})))
end

# Only the JSON texts are kept (off-heap binaries): each input runs in a fresh process holding just its text, so
# no collection in the timed loop walks the other inputs' terms.
inputs =
  (for({"keys", name, json, _term} <- Suite.inputs(:full), do: {name, json}) ++
     for(
       {name, json, _term} <- [wide.(100, 20), wide.(1000, 20)] ++ Inputs.shared(),
       name in ["wide_100x20", "wide_1000x20", "twitter", "citm_catalog"],
       do: {name, json}
     ))
  |> Enum.filter(fn {name, _} ->
    only == nil or Enum.any?(String.split(only, ","), &String.contains?(name, &1))
  end)

:erlang.garbage_collect()

chunk_us = 100_000

# Calls per microsecond of `fun` over one chunk.
chunk = fn fun ->
  t_end = System.monotonic_time(:microsecond) + chunk_us

  loop = fn loop, k ->
    fun.()
    if System.monotonic_time(:microsecond) < t_end, do: loop.(loop, k + 1), else: k + 1
  end

  t0 = System.monotonic_time(:microsecond)
  k = loop.(loop, 0)
  (System.monotonic_time(:microsecond) - t0) / k
end

median = fn list -> Enum.at(Enum.sort(list), div(length(list), 2)) end
fmt = &:erlang.float_to_binary(&1 / 1, decimals: 2)

IO.puts("| input | size | default | keys: :intern | intern / default |")
IO.puts("| --- | ---: | ---: | ---: | ---: |")

for {name, json} <- inputs do
  samples =
    Task.async(fn ->
      for _ <- 1..rounds do
        d = chunk.(fn -> RustyJson.decode!(json) end)
        i = chunk.(fn -> RustyJson.decode!(json, keys: :intern) end)
        {d, i}
      end
    end)
    |> Task.await(:infinity)

  d = median.(Enum.map(samples, &elem(&1, 0)))
  i = median.(Enum.map(samples, &elem(&1, 1)))
  ratio = median.(Enum.map(samples, fn {d, i} -> i / d end))
  IO.puts("| #{name} | #{byte_size(json)} B | #{fmt.(d)} µs | #{fmt.(i)} µs | #{fmt.(ratio)} |")
end
