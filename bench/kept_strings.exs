# Issue #57: what a kept escaped string holds, and the speed of decoding escaped text (bench/notes/21-kept-strings.md).
# Runs from any build's checkout, so two builds can be run alternately:
#   cd CHECKOUT && taskset -c 1 elixir -pa _build/dev/lib/*/ebin PATH/TO/bench/kept_strings.exs [speed|memory] [N]
# Prints one line per document (best of N decodes, fresh process) and the memory a kept string holds.
Code.require_file("best_of.exs", __DIR__)
Code.require_file("inputs.exs", __DIR__)

# `Inputs` builds its documents with jiffy, which is not a dependency: the same text from RustyJson when absent.
unless Code.ensure_loaded?(:jiffy) do
  defmodule :jiffy do
    @moduledoc false
    def encode(term), do: encode(term, [])

    def encode(term, opts),
      do: RustyJson.encode!(term, if(:uescape in opts, do: [escape: :unicode_safe], else: []))

    def decode(json, _opts), do: RustyJson.decode!(json)
  end
end

alias RustyJson.Bench.Inputs
[mode | rest] = System.argv() ++ ["all"]
n = String.to_integer(Enum.find(rest, "20", &(&1 =~ ~r/^\d+$/)))

if mode in ["all", "speed"] do
  # Generated once and kept in $KEPT_DOCS (default tmp/kept_docs) so alternated runs of two builds read the same
  # text and do not spend their time generating it.
  dir = System.get_env("KEPT_DOCS") || "tmp/kept_docs"

  docs =
    case File.ls(dir) do
      {:ok, [_ | _] = files} ->
        for f <- Enum.sort(files), do: {Path.rootname(f), File.read!(Path.join(dir, f))}

      _ ->
        escaped =
          Enum.filter(Inputs.content_kinds(), fn {name, _, _} -> name =~ ~r/escape|liveview/ end)

        {_, text, _} = Inputs.from_term("escaped_text", Inputs.escaped_text(3000))
        twitter = File.read!(Path.join(Inputs.shared_dir(), "twitterescaped.json"))

        docs = [
          {"escaped_text", text},
          {"twitterescaped", twitter} | Enum.map(escaped, &Tuple.delete_at(&1, 2))
        ]

        File.mkdir_p!(dir)
        for {name, json} <- docs, do: File.write!(Path.join(dir, name <> ".json"), json)
        docs
    end

  for {name, json} <- docs do
    us = RustyJson.Bench.BestOf.run(fn -> RustyJson.decode!(json) end, n)
    IO.puts("decode #{name} (#{div(byte_size(json), 1000)} KB): #{us} µs")
  end
end

if mode in ["all", "memory"] do
  # One string of `len` bytes with an escape kept from each of `decodes` decodes of a ~70 KB document of such
  # strings (the issue's measure), and the growth of the VM's binary memory while they are held.
  for len <- [68, 200, 1_000, 3_000, 5_000] do
    decodes = 500
    count = max(2, div(70_000, len))
    texts = for i <- 1..count, do: String.duplicate("a", len - 8) <> "\t\"#{100_000 + i}"
    json = RustyJson.encode!(texts)
    true = Enum.all?(RustyJson.decode!(json), &(byte_size(&1) == len))

    :erlang.garbage_collect()
    before = :erlang.memory(:binary)

    kept =
      for _ <- 1..decodes do
        # In a process of its own, which is gone (with the rest of its decode) when the string comes back.
        task = Task.async(fn -> Enum.at(RustyJson.decode!(json), div(count, 2)) end)
        Task.await(task)
      end

    for _ <- 1..3, do: :erlang.garbage_collect()
    grown = :erlang.memory(:binary) - before
    held = :binary.referenced_byte_size(hd(kept))

    IO.puts(
      "keep one #{len}-byte escaped string from each of #{decodes} decodes: binary memory +#{grown} B " <>
        "(#{div(grown, decodes)} B a string, #{Float.round(grown / (decodes * len), 1)}x its size); " <>
        "referenced_byte_size #{held}"
    )

    length(kept)
  end
end
