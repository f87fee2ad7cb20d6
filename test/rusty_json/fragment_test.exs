defmodule RustyJson.FragmentTest do
  use ExUnit.Case, async: true

  alias RustyJson.Fragment

  test "encode is a function of the options, as Jason's, for iodata and function fragments" do
    for iodata <- [~s({"a":1}), [~s({"a":), ["1"], "}"], ~c"[1]"] do
      fragment = Fragment.new(iodata)
      assert is_function(fragment.encode, 1)
      assert fragment.encode.([]) == iodata
      assert fragment.encode.(escape: :html_safe) == iodata
      assert RustyJson.encode!([fragment]) == "[" <> IO.iodata_to_binary(iodata) <> "]"
    end

    fun = fn opts ->
      send(self(), {:called, opts})
      "[true]"
    end

    fragment = Fragment.new(fun)
    assert fragment.encode == fun
    assert RustyJson.encode!(%{"x" => fragment}) == ~s({"x":[true]})
    assert_received {:called, _opts}
  end

  test "a fragment built by hand with only a function, as Jason code writes it" do
    fragment = %Fragment{encode: fn _opts -> ~s("hand") end}
    assert RustyJson.encode!([fragment, Fragment.new("1")]) == ~s(["hand",1])
    assert RustyJson.encode!(%{a: fragment}, pretty: true) == ~s({\n  "a": "hand"\n})

    # Iodata in `encode`, as earlier RustyJson versions stored it, is still written.
    assert RustyJson.encode!([%Fragment{encode: ["[", "1]"]}]) == "[[1]]"
  end

  test "iodata fragments are written by the NIF; function fragments are called once per encode" do
    parent = self()

    counted =
      Fragment.new(fn _ ->
        send(parent, :called)
        "2"
      end)

    assert RustyJson.encode!([Fragment.new("1"), counted, Fragment.new(["3"])]) == "[1,2,3]"
    assert_received :called
    refute_received :called
  end

  test "fragments inside derived structs, ordered objects and pretty output" do
    fragment = Fragment.new(~s({"k":[1,2]}))
    ordered = RustyJson.OrderedObject.new(b: fragment, a: Fragment.new(fn _ -> "null" end))
    assert RustyJson.encode!(ordered) == ~s({"b":{"k":[1,2]},"a":null})

    assert RustyJson.encode!(ordered, pretty: true) ==
             ~s({\n  "b": {\n    "k": [\n      1,\n      2\n    ]\n  },\n  "a": null\n})
  end
end
