defmodule RustyJson.DecodeTermCeilingTest do
  # The ceiling on a decoded term's memory (#54): the VM aborts when it cannot allocate a term's heap, so a decode
  # stops first, with an error at the container that passed the ceiling. The ceiling is global (set at load), so
  # these tests change it and run alone (async: false runs after every async test).
  use ExUnit.Case, async: false

  alias RustyJson.{DecodeError, Native}

  defp list_json(n), do: "[" <> Enum.map_join(1..n, ",", &Integer.to_string/1) <> "]"

  setup do
    on_exit(fn -> Native.configure_max_term_bytes(0) end)
  end

  test "the learned ceiling is a sixteenth of the memory the process may use" do
    %{max_term_bytes: max, memory: {memory, source}} = Native.info()
    assert source in [:address_space, :cgroup, :physical, :unknown]
    if source != :unknown, do: assert(max == div(memory, 16))
    # Far above any document the suite decodes.
    assert max >= 64 * 1024 * 1024
  end

  test "a decode past the ceiling is a DecodeError naming it, at the container that passed it" do
    Native.configure_max_term_bytes(24_000)
    # 24 bytes an item: 1,000 items are exactly at it.
    assert {:ok, list} = RustyJson.decode(list_json(1000))
    assert length(list) == 1000

    input = list_json(1001)

    assert {:error, %DecodeError{max_term_bytes: 24_000, position: position} = error} =
             RustyJson.decode(input)

    assert position == byte_size(input) - 1
    assert Exception.message(error) =~ "more than the max_term_bytes ceiling of 24000 bytes"
    assert_raise DecodeError, ~r/max_term_bytes/, fn -> RustyJson.decode!(input) end
  end

  test "nesting counts each container, objects by their pairs, and large inputs across their slices" do
    Native.configure_max_term_bytes(1_000_000)
    deep = String.duplicate("[", 50_000) <> String.duplicate("]", 50_000)
    assert {:error, %DecodeError{max_term_bytes: 1_000_000}} = RustyJson.decode(deep)

    pairs = "{" <> Enum.map_join(1..50_000, ",", &~s("k#{&1}":1)) <> "}"
    assert {:error, %DecodeError{max_term_bytes: 1_000_000}} = RustyJson.decode(pairs)

    # 2 MB of small arrays: decoded in many slices, counted on from one to the next.
    many = "[" <> Enum.map_join(1..100_000, ",", fn _ -> "[1]" end) <> "]"
    assert byte_size(many) > 65_536
    assert {:error, %DecodeError{max_term_bytes: 1_000_000}} = RustyJson.decode(many)

    Native.configure_max_term_bytes(0)
    assert {:ok, _} = RustyJson.decode(many)
  end

  test "the stack of open containers counts too: deep nesting stops before any term is built" do
    Native.configure_max_term_bytes(1_000_000)
    open = String.duplicate("[", 200_000)

    assert {:error, %DecodeError{max_term_bytes: 1_000_000, position: at}} =
             RustyJson.decode(open)

    # Checked as the stack takes a new chunk: past 1 MB of 24-byte levels, well before the input's end.
    assert at > 1_000_000 / 24 and at < 100_000

    Native.configure_max_term_bytes(0)
    assert {:error, %DecodeError{max_term_bytes: nil}} = RustyJson.decode(open)
  end

  test "get/3 and Fragment.new! build no term: only decode is held to it" do
    Native.configure_max_term_bytes(1000)
    input = list_json(1000)
    assert {:ok, 1000} = RustyJson.get(input, "/999")
    assert %RustyJson.Fragment{} = RustyJson.Fragment.new!(input)
  end

  test "stream items are counted one by one" do
    Native.configure_max_term_bytes(24_000)
    lines = [list_json(1000), "\n", list_json(1000)]
    assert [_, _] = lines |> RustyJson.Stream.decode_documents() |> Enum.to_list()

    assert_raise DecodeError, ~r/max_term_bytes/, fn ->
      [list_json(1001)] |> RustyJson.Stream.decode_documents() |> Enum.to_list()
    end
  end
end
