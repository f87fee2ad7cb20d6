# `compress: {:gzip, level}` against gzip done after the encode: `RustyJson.encode!(term, compress: {:gzip, l})`
# vs `:zlib` (the VM's zlib, a gzip stream at the same level) on `RustyJson.encode!(term)`, interleaved.
# Run: mix run bench/compress.exs
# Options: RUSTYJSON_BENCH_ROUNDS (default 11), RUSTYJSON_BENCH_ONLY=name,name, RUSTYJSON_BENCH_LEVELS=1,6,9.
Code.require_file("inputs.exs", __DIR__)

alias RustyJson.Bench.Inputs

rounds = String.to_integer(System.get_env("RUSTYJSON_BENCH_ROUNDS", "11"))

levels =
  System.get_env("RUSTYJSON_BENCH_LEVELS", "1,6,9")
  |> String.split(",")
  |> Enum.map(&String.to_integer/1)

only = System.get_env("RUSTYJSON_BENCH_ONLY", "canada,citm_catalog,twitter") |> String.split(",")

# What `:zlib.gzip/1` does, at a given level (windowBits 16 + 15: a gzip wrapper).
zlib_gzip = fn data, level ->
  z = :zlib.open()

  try do
    :ok = :zlib.deflateInit(z, level, :deflated, 31, 8, :default)
    out = :zlib.deflate(z, data, :finish)
    :ok = :zlib.deflateEnd(z)
    IO.iodata_to_binary(out)
  after
    :zlib.close(z)
  end
end

median = fn fun ->
  times = for _ <- 1..rounds, do: elem(:timer.tc(fun), 0)
  Enum.at(Enum.sort(times), div(rounds, 2))
end

IO.puts(
  "| document | JSON | level | RustyJson gzip | encode! + :zlib | ratio | gzip size (ours / zlib) |"
)

IO.puts("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")

for name <- only do
  term = Path.join(Inputs.shared_dir(), name <> ".json") |> File.read!() |> RustyJson.decode!()
  plain = RustyJson.encode!(term)

  for level <- levels do
    ours_fun = fn -> RustyJson.encode!(term, compress: {:gzip, level}) end
    zlib_fun = fn -> zlib_gzip.(RustyJson.encode!(term), level) end
    ours_size = byte_size(ours_fun.())
    zlib_size = byte_size(zlib_fun.())
    true = :zlib.gunzip(ours_fun.()) == plain

    # Interleaved, so drift on the shared machine hits both alike.
    {ours, zlib} =
      Enum.reduce(1..3, {[], []}, fn _, {o, z} ->
        {[median.(ours_fun) | o], [median.(zlib_fun) | z]}
      end)

    {ours, zlib} = {Enum.min(ours), Enum.min(zlib)}

    IO.puts(
      "| #{name} | #{Float.round(byte_size(plain) / 1_048_576, 2)} MB | #{level} | #{Float.round(ours / 1000, 2)} ms " <>
        "| #{Float.round(zlib / 1000, 2)} ms | #{Float.round(ours / zlib, 2)} | #{ours_size} / #{zlib_size} |"
    )
  end
end
