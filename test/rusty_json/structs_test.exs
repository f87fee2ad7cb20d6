defmodule RustyJson.StructsTest do
  use ExUnit.Case, async: true

  alias RustyJson.{EncodeError, Fragment, OrderedObject}

  alias RustyJson.Test.{
    Derived,
    DerivedOnly,
    Empty,
    Inner,
    Middle,
    Money,
    NoImpl,
    Odd,
    Outer,
    Point
  }

  import RustyJson.Test.Expect

  defp nested(i) do
    %Outer{
      middle: %Middle{tag: "t#{i}", inner: %Inner{x: i}, hidden: {:no}},
      list: [%Inner{x: 1.5}, %{"plain" => %Inner{}}],
      skip: self(),
      at: ~D[2026-01-02]
    }
  end

  # nested(i) as ordered objects in the orders the derives write (`middle` keeps only:'s order).
  defp as_maps(i) do
    ordered(Outer, %{
      middle: OrderedObject.new(inner: ordered(Inner, %{x: i, y: [1, 2]}), tag: "t#{i}"),
      list: [
        ordered(Inner, %{x: 1.5, y: [1, 2]}),
        %{"plain" => ordered(Inner, %{x: nil, y: [1, 2]})}
      ],
      at: "2026-01-02"
    })
  end

  defp inner_json(x), do: derived(Inner, %{x: x, y: "[1,2]"})

  test "derived templates: all fields in the compiling VM's Map.keys order, only: in its order, except:, nested" do
    assert RustyJson.encode!(%Derived{name: "Ada", age: 36}) ==
             derived(Derived, %{name: ~s("Ada"), age: "36", email: "null"})

    assert RustyJson.encode!(nested(7)) ==
             derived(Outer, %{
               at: ~s("2026-01-02"),
               list: "[" <> inner_json("1.5") <> ~s(,{"plain":) <> inner_json("null") <> "}]",
               middle: object(inner: inner_json("7"), tag: ~s("t7"))
             })

    # On OTP 25 (small maps list atom keys by name) that order is the sorted one.
    if System.otp_release() == "25" do
      assert Derived.__written__() == [:age, :email, :name]
      assert Outer.__written__() == [:at, :list, :middle]
    end

    assert RustyJson.encode!(%Empty{a: 1}) == "{}"
    assert RustyJson.encode!([%Empty{}, %Empty{}]) == "[{},{}]"
  end

  test "the derived encode/2 returns the same JSON as iodata" do
    for value <- [%Derived{name: "é"}, nested(1), %Empty{}] do
      iodata = RustyJson.Encoder.encode(value, [])
      assert IO.iodata_to_binary(iodata) == RustyJson.encode!(value)
    end

    # Not the struct's own shape (an extra key): the compiled iodata template.
    odd = Map.put(%Derived{name: "</", age: %Inner{x: 1}}, :extra, 1)
    iodata = RustyJson.Encoder.encode(odd, escape: :html_safe)
    assert is_list(iodata)

    assert IO.iodata_to_binary(iodata) ==
             derived(Derived, %{age: inner_json("1"), email: "null", name: ~S("\u003C\/")})
  end

  test "derived keys are written raw, as Jason writes them" do
    assert RustyJson.encode!(%Odd{"a<b": "<"}, escape: :html_safe) ==
             derived(Odd, %{"a<b": ~S("\u003C"), Z: "null", _u: "null"})
  end

  test "many structs: the first call and later calls agree, with options and pretty" do
    list = Enum.map(1..300, &nested/1)
    expected = Enum.map(1..300, &as_maps/1)

    for opts <- [[], [escape: :unicode_safe], [maps: :strict], [pretty: true]] do
      want = RustyJson.encode!(expected, opts)
      assert RustyJson.encode!(list, opts) == want
      assert RustyJson.encode!(list, opts) == want
      assert {:ok, ^want} = RustyJson.encode(list, opts)
    end
  end

  test "a long list of derived structs continues on a dirty scheduler" do
    list = Enum.map(1..60_000, &%Derived{name: "n#{&1}", age: &1, email: [&1]})
    json = RustyJson.encode!(list)
    assert json == RustyJson.encode!(Enum.map(list, &ordered(Derived, Map.from_struct(&1))))
    # With a custom implementation in it (holes) too.
    mixed = list ++ [%Money{amount: 1, currency: "x"}]

    assert RustyJson.encode!(mixed) ==
             String.slice(json, 0..-2//1) <> ~s(,{"amount":1,"currency":"x"}])
  end

  test "custom implementations and fragments among derived structs" do
    term = [
      %Point{x: 1, y: 2},
      %Derived{age: 1},
      Fragment.new(fn _ -> "[0]" end),
      %Point{x: %Derived{}, y: nil}
    ]

    assert RustyJson.encode!(term) ==
             ~s([{"xy":[1,2]},) <>
               derived(Derived, %{age: "1", email: "null", name: "null"}) <>
               ~s(,[0],{"xy":[) <>
               derived(Derived, %{age: "null", email: "null", name: "null"}) <> ",null]}]"

    assert RustyJson.encode!(term, pretty: true) ==
             RustyJson.encode!(
               [
                 %{"xy" => [1, 2]},
                 ordered(Derived, %{age: 1, email: nil, name: nil}),
                 [0],
                 %{"xy" => [ordered(Derived, %{age: nil, email: nil, name: nil}), nil]}
               ],
               pretty: true
             )
  end

  test "pretty output with a custom implementation among many derived structs" do
    list = Enum.map(1..50, &%Derived{age: &1, name: %Point{x: &1, y: [%Inner{x: &1}]}})

    maps =
      Enum.map(1..50, fn i ->
        ordered(Derived, %{
          age: i,
          email: nil,
          name: %{"xy" => [i, [ordered(Inner, %{x: i, y: [1, 2]})]]}
        })
      end)

    assert RustyJson.encode!(list, pretty: true) == RustyJson.encode!(maps, pretty: true)
    assert RustyJson.encode!(list) == RustyJson.encode!(maps)
  end

  test "maps with String.Chars keys inside derived structs and custom implementations" do
    v = [
      %Derived{name: %{~D[2026-01-01] => 1}},
      %Point{x: %{1.5 => %Inner{x: %{nil => 2}}}, y: 0}
    ]

    assert RustyJson.encode!(v) ==
             "[" <>
               derived(Derived, %{age: "null", email: "null", name: ~s({"2026-01-01":1})}) <>
               ~s(,{"xy":[{"1.5":) <> inner_json(~s({"nil":2})) <> "},0]}]"

    assert_raise Protocol.UndefinedError, fn -> RustyJson.encode(%Derived{name: %{{:t} => 1}}) end
  end

  test "errors inside derived structs are Jason's" do
    assert {:error, %EncodeError{message: "invalid byte 0xFF in <<255>>"}} =
             RustyJson.encode([%Derived{name: <<255>>}])

    assert {:error, %Protocol.UndefinedError{value: {:t}}} = RustyJson.encode(%Inner{x: {:t}})

    assert {:error, %Protocol.UndefinedError{value: %NoImpl{}}} =
             RustyJson.encode([%Point{x: 1, y: 2}, %Inner{x: %NoImpl{}}])

    assert {:error, %EncodeError{}} =
             RustyJson.encode([%Point{x: 1, y: 2}, %Derived{name: <<255>>}])

    assert_raise EncodeError, fn -> RustyJson.encode!(%{"a" => %Point{x: <<255>>, y: 1}}) end
  end

  test "a map that is not its struct's shape goes through the protocol" do
    partial = %{__struct__: Derived, name: "x"}
    assert_raise FunctionClauseError, fn -> RustyJson.encode!([partial]) end
    swapped = %{__struct__: Derived, name: "x", age: 1, other: 2}
    assert_raise FunctionClauseError, fn -> RustyJson.encode!([swapped]) end
    assert_raise FunctionClauseError, fn -> RustyJson.encode!([swapped], pretty: true) end
    extra = Map.put(%DerivedOnly{id: 1, name: "n"}, :more, 1)
    assert RustyJson.encode!([extra]) == ~s([{"name":"n","id":1}])
  end

  test "a reloaded derived module replaces the NIF's template" do
    # Loaded again from its beam file: its @on_load registers its template. (Not a call of the implementation's
    # functions by name here: for the type checker, `impl_for/1` may return modules that do not define them.)
    impl = RustyJson.Encoder.impl_for(%Derived{})
    {^impl, beam, path} = :code.get_object_code(impl)
    :code.purge(impl)
    {:module, ^impl} = :code.load_binary(impl, path, beam)

    assert RustyJson.encode!([%Derived{age: 2}]) ==
             "[" <> derived(Derived, %{age: "2", email: "null", name: "null"}) <> "]"
  end

  test "a struct without a Jason.Encoder implementation has no Jason fallback" do
    # (Jason, or the tests' stand-in for it, is loaded: test/support/jason_stand_in.ex.)
    assert RustyJson.Encoder.Fallback.jason_impl(%NoImpl{}) == nil
  end

  test "Protocol.UndefinedError tells how to derive" do
    assert {:error, %Protocol.UndefinedError{} = e} = RustyJson.encode(%NoImpl{})
    msg = Exception.message(e)
    assert msg =~ "@derive {RustyJson.Encoder, only: [....]}"
    assert msg =~ "Protocol.derive(RustyJson.Encoder, NameOfTheStruct)"
  end

  test "compile-time errors of @derive" do
    # (Defining impls after consolidation warns; the warnings are not the point here.)
    ExUnit.CaptureIO.capture_io(:stderr, fn -> compile_errors() end)
  end

  defp compile_errors do
    assert_raise ArgumentError,
                 "`:only` specified keys ([:nope]) that are not defined in defstruct: [:a]",
                 fn ->
                   Code.eval_string("""
                   defmodule RustyJson.Test.BadOnly do
                     @derive {RustyJson.Encoder, only: [:nope]}
                     defstruct [:a]
                   end
                   """)
                 end

    assert_raise ArgumentError, ~r/`:except` specified keys \(\[:b\]\)/, fn ->
      Code.eval_string("""
      defmodule RustyJson.Test.BadExcept do
        @derive {RustyJson.Encoder, except: [:b]}
        defstruct [:a]
      end
      """)
    end

    # A misspelt option must not encode every field (jason#183): each is a compile error naming it.
    for {name, options, message} <- [
          {BadTypo, "onyl: [:name]", "unknown option(s) [:onyl] for @derive RustyJson.Encoder"},
          {BadTwo, "only: [:name], excpet: [:password], on: 1", "[:excpet, :on]"},
          {BadBoth, "only: [:name], except: [:password]", "takes :only or :except, not both"},
          {BadList, "[:name]", "expects a keyword list with :only or :except, got: [:name]"},
          {BadValue, "only: :name",
           "the :only option of @derive RustyJson.Encoder expects a list"}
        ] do
      module = Module.concat(RustyJson.Test, name)

      error =
        assert_raise ArgumentError, fn ->
          Code.eval_string("""
          defmodule #{inspect(module)} do
            @derive {RustyJson.Encoder, #{options}}
            defstruct [:name, :password]
          end
          """)
        end

      assert error.message =~ message
      # The struct never got an implementation that could write its password.
      refute function_exported?(Module.concat(RustyJson.Encoder, module), :encode, 2)
    end

    assert_raise EncodeError, ~s(invalid byte 0x2F in literal key: "my/key"), fn ->
      Code.eval_string("""
      defmodule RustyJson.Test.BadKey do
        @derive RustyJson.Encoder
        defstruct [:"my/key"]
      end
      """)
    end
  end

  test "dates, fragments and ordered objects inside derived structs" do
    dt = DateTime.from_naive!(~N[2026-11-22 12:00:00.123456], "Etc/UTC")

    v = %Derived{
      name: [~T[01:02:03.5], ~N[2026-01-02 03:04:05], dt],
      age: Fragment.new("1e2"),
      email: OrderedObject.new(b: 1, a: 2)
    }

    assert RustyJson.encode!(v) ==
             derived(Derived, %{
               age: "1e2",
               email: ~s({"b":1,"a":2}),
               name: ~s(["01:02:03.5","2026-01-02T03:04:05","2026-11-22T12:00:00.123456Z"])
             })
  end
end
