defmodule RustyJson.DecodeJSONTestSuiteTest do
  # Every file of JSONTestSuite's test_parsing/: y_ accepted with jiffy's value, n_ rejected, i_ answered
  # without crashing.
  use ExUnit.Case, async: true

  @dir Path.expand("../../../shared/data/JSONTestSuite/test_parsing", __DIR__)

  # y_ files where jiffy's answer is not Jason's: Jason (and RustyJson) keep the first of duplicate keys.
  @jiffy_differs %{
    "y_object_duplicated_key.json" => %{"a" => "b"}
  }

  defp files(prefix) do
    @dir |> File.ls!() |> Enum.filter(&String.starts_with?(&1, prefix)) |> Enum.sort()
  end

  defp jiffy(bin) do
    {:ok, :jiffy.decode(bin, [:return_maps, :use_nil])}
  rescue
    _ -> :rejected
  catch
    _, _ -> :rejected
  end

  test "y_ files are accepted with jiffy's value" do
    files = files("y_")

    bad =
      for name <- files,
          bin = File.read!(Path.join(@dir, name)),
          result = RustyJson.decode(bin),
          expected = Map.get_lazy(@jiffy_differs, name, fn -> jiffy(bin) end),
          expected = if(is_map_key(@jiffy_differs, name), do: {:ok, expected}, else: expected),
          not match?({:ok, _}, result) or (expected != :rejected and result != expected),
          do: {name, result, expected}

    IO.puts("JSONTestSuite y_: #{length(files) - length(bad)}/#{length(files)} accepted as jiffy")
    assert bad == []
  end

  test "n_ files are rejected with a DecodeError" do
    files = files("n_")

    bad =
      for name <- files,
          bin = File.read!(Path.join(@dir, name)),
          result = RustyJson.decode(bin),
          not match?({:error, %RustyJson.DecodeError{}}, result),
          do: {name, result}

    IO.puts("JSONTestSuite n_: #{length(files) - length(bad)}/#{length(files)} rejected")
    assert bad == []
  end

  test "i_ files are answered without crashing" do
    files = files("i_")

    answers =
      for name <- files do
        bin = File.read!(Path.join(@dir, name))

        case RustyJson.decode(bin) do
          {:ok, _} -> :accepted
          {:error, %RustyJson.DecodeError{} = e} -> {:rejected, Exception.message(e)}
        end
      end

    accepted = Enum.count(answers, &(&1 == :accepted))

    IO.puts(
      "JSONTestSuite i_: #{length(files)} answered (#{accepted} accepted, " <>
        "#{length(files) - accepted} rejected)"
    )

    assert length(answers) == length(files)
  end
end
