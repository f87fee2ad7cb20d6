# The part of BENCHMARKS.md after the host's timed tables: the other VMs' tables (bench/vms/*.md, written by
# `--vm-section` in the version matrix's roots), the summaries the notes mark for the report, and links to the
# notes. `make bench` (bench/report.exs) writes it after a timing run; `--notes-only` rebuilds it under the timed
# tables already in the file, so the two give the same structure.

defmodule RustyJson.Bench.ReportTail do
  @moduledoc false

  @marker "<!-- The timed tables end here: `mix run bench/report.exs --notes-only` rewrites what follows from " <>
            "bench/vms/*.md and bench/notes/*.md. -->"

  @repro_row ~r/^\| (\S+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)% \|$/m

  # A note's block for the report (at most one per note), between these two lines.
  @summary_begin "<!-- report-summary: bench/report.exs copies this block into BENCHMARKS.md -->"
  @summary_end "<!-- /report-summary -->"

  @doc "The whole report: `timed` (the host's tables) and the tail, for a report written to `out`."
  @spec assemble(String.t(), Path.t()) :: String.t()
  def assemble(timed, out), do: String.trim_trailing(timed) <> "\n\n" <> tail(Path.dirname(out))

  @doc "Rewrites everything after the timed tables of the report at `out`; no timing runs."
  @spec rebuild(Path.t()) :: :ok
  def rebuild(out) do
    timed = out |> File.read!() |> timed_part() |> shorten_reproducibility()
    File.write!(out, assemble(timed, out))
  end

  # The inputs whose two runs' ratios moved most are listed; the rest are counted.
  @repro_rows 3

  @doc """
  The reproducibility section's text from each input's name, the two timing runs' RustyJson / jiffy ratios as
  written (encode run 1 and 2, decode run 1 and 2) and their largest relative difference (0.054 for 5.4%).
  """
  @spec reproducibility([{String.t(), [String.t()], float()}]) :: String.t()
  def reproducibility(rows) do
    within = Enum.count(rows, fn {_, _, d} -> d <= 0.10 end)
    moved = rows |> Enum.sort_by(&elem(&1, 2), :desc) |> Enum.take(@repro_rows)

    table =
      for {name, ratios, d} <- moved, do: "| #{name} | #{Enum.join(ratios, " | ")} | #{pct(d)} |"

    """
    The timing part ran twice in this invocation: the RustyJson / jiffy ratios of #{within} of #{length(rows)}
    inputs are within 10% between the two runs (largest difference #{pct(moved |> hd() |> elem(2))}). The #{length(moved)} that moved most:

    | input | encode run 1 | encode run 2 | decode run 1 | decode run 2 | largest difference |
    | --- | ---: | ---: | ---: | ---: | ---: |
    #{Enum.join(table, "\n")}
    """
  end

  defp pct(d), do: "#{:erlang.float_to_binary(d * 100, decimals: 1)}%"

  # A report written before `reproducibility/1` listed every input: its table gives the same rows.
  defp shorten_reproducibility(timed) do
    with [before, section] <- String.split(timed, "## Reproducibility\n\n", parts: 2),
         false <- String.contains?(section, "moved most"),
         [body | rest] = String.split(section, ~r/\n(?=#)/, parts: 2),
         [_ | _] = rows <-
           for(
             [_, name, a, b, c, d, p] <- Regex.scan(@repro_row, body),
             do: {name, [a, b, c, d], String.to_float(p) / 100}
           ) do
      Enum.join([
        before,
        "## Reproducibility\n\n",
        reproducibility(rows) | Enum.map(rest, &("\n" <> &1))
      ])
    else
      _ -> timed
    end
  end

  # The marker, or in a report written before it, the first heading after the host's tables.
  defp timed_part(text) do
    [@marker, "\n# Other Erlang/OTP and Elixir versions\n", "\n# Development notes\n"]
    |> Enum.find_value(fn separator ->
      case String.split(text, separator, parts: 2) do
        [timed, _] -> timed
        [_] -> nil
      end
    end) || raise "no end of the timed tables found: run `make bench` to write the report"
  end

  defp tail(dir) do
    notes = dir |> notes() |> Enum.sort()

    Enum.join(
      [@marker, vm_sections(), summaries(notes), index(notes)] |> Enum.reject(&(&1 == "")),
      "\n\n"
    ) <> "\n"
  end

  # {link from the report's directory, title, text} per note.
  defp notes(dir) do
    for path <- Path.wildcard(Path.expand("notes/*.md", __DIR__)) do
      text = File.read!(path)
      ["## " <> title | _] = String.split(text, "\n", parts: 2)
      {link(path, dir), String.replace(title, ": development measurements", ""), text}
    end
  end

  # Relative to the report (bench/notes/... beside BENCHMARKS.md); absolute for a report written elsewhere.
  defp link(path, dir), do: Path.relative_to(path, Path.expand(dir))

  # The sections other VMs wrote (bench/vms/*.md), for the full report.
  defp vm_sections do
    case Path.wildcard(Path.expand("vms/*.md", __DIR__)) do
      [] ->
        ""

      paths ->
        "# Other Erlang/OTP and Elixir versions\n\n" <>
          "The same suite on the version matrix's VMs (tables written by `--vm-section` in each root).\n\n" <>
          Enum.map_join(Enum.sort(paths), "\n\n", &String.trim_trailing(File.read!(&1)))
    end
  end

  defp summaries(notes) do
    case for {link, title, text} <- notes,
             block <- List.wrap(summary(text)),
             do: {link, title, block} do
      [] ->
        ""

      blocks ->
        """
        # Streams, scheduler latency and worst-case inputs

        Not timed by `make bench`: each has its own command; the latest figures, from the note each heading links.

        """ <>
          Enum.map_join(blocks, "\n\n", fn {link, title, block} ->
            "## #{title}: [#{Path.basename(link)}](#{link})\n\n#{block}"
          end)
    end
  end

  defp summary(text) do
    with [_, rest] <- String.split(text, @summary_begin <> "\n", parts: 2),
         [block, _] <- String.split(rest, @summary_end, parts: 2) do
      String.trim(block)
    else
      _ -> nil
    end
  end

  defp index(notes) do
    """
    # Development notes

    Measurements made while building each part, the profiles and what was tried, by hand, dated and tied to commits:

    """ <> Enum.map_join(notes, "\n", fn {link, title, _} -> "- [#{title}](#{link})" end)
  end
end
