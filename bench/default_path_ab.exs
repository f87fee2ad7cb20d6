# The default path (no options) on the public documents and a small object, best of N: for comparing two builds,
# run alternately from each build's checkout (bench/notes/17-bit-offsets-reloads-0.3.md).
#   taskset -c 1 mix run PATH/TO/bench/default_path_ab.exs
Code.require_file("best_of.exs", __DIR__)
dir = System.get_env("RUSTYJSON_BENCH_DATA") || Path.expand("../../shared/data/bench", __DIR__)

docs =
  for f <- ~w(twitter citm_catalog canada github_events),
      do: {f, File.read!(Path.join(dir, f <> ".json"))}

small = ~s({"id":123,"name":"user","tags":["a","b"],"active":true,"score":1.5})

best = &RustyJson.Bench.BestOf.run/2

for {name, json} <- docs do
  term = RustyJson.decode!(json)
  d = best.(fn -> RustyJson.decode!(json) end, 30)
  e = best.(fn -> RustyJson.encode!(term) end, 30)
  IO.puts("#{name}: decode #{d} us, encode #{e} us")
end

st = RustyJson.decode!(small)
d = best.(fn -> for _ <- 1..1000, do: RustyJson.decode!(small) end, 20)
e = best.(fn -> for _ <- 1..1000, do: RustyJson.encode!(st) end, 20)
IO.puts("small x1000: decode #{d} us, encode #{e} us")

# Derived structs (bench/support: compiled in the dev environment).
s5 =
  struct(
    RustyJson.Bench.S5,
    Map.new(Map.keys(struct(RustyJson.Bench.S5)) -- [:__struct__], &{&1, 1})
  )

field = hd(Map.keys(s5) -- [:__struct__])
list = for i <- 1..1000, do: Map.put(s5, field, i)
one = best.(fn -> for _ <- 1..1000, do: RustyJson.encode!(s5) end, 20)
many = best.(fn -> RustyJson.encode!(list) end, 30)
IO.puts("derived struct x1000: encode #{one} us; 1,000 derived structs: encode #{many} us")
