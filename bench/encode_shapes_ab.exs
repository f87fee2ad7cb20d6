# The best of N encodes of three shapes the key cache and the sub-binary reads were measured on (bench/notes/
# 16-app-shapes.md): records built from one literal, decoded public documents, and the parts String.split returns.
# For comparing two builds, run alternately from each build's checkout:
#   taskset -c 1 mix run --no-compile PATH/TO/bench/encode_shapes_ab.exs [N]
n = String.to_integer(List.first(System.argv()) || "30")
shared = Path.expand("../../shared/data/bench", __DIR__)

records =
  for i <- 1..50_000 do
    %{
      "id" => i,
      "name" => "n",
      "email" => "e",
      "active" => true,
      "role" => "r",
      "score" => i,
      "inserted_at" => "t",
      "updated_at" => "u"
    }
  end

decoded =
  for f <- ~w(twitter citm_catalog),
      do: {f, RustyJson.decode!(File.read!(Path.join(shared, f <> ".json")))}

parts = String.split(Enum.map_join(1..200_000, ",", &"value #{&1} of the row"), ",")

best = fn term ->
  RustyJson.encode!(term)
  Enum.min(for _ <- 1..n, do: elem(:timer.tc(fn -> RustyJson.encode!(term) end), 0))
end

shapes = [{"literal records", records}] ++ decoded ++ [{"split parts", parts}]

IO.puts(
  File.cwd!() <> ": " <> Enum.map_join(shapes, ", ", fn {name, t} -> "#{name} #{best.(t)} µs" end)
)
