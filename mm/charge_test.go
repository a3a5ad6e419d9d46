package mm

import "testing"

func TestBudgetRefusesPastLimitAndTakesNothing(t *testing.T) {
	var b Budget
	b.SetLimit(100)
	if err := b.Charge(60); err != nil {
		t.Fatalf("Charge(60) of 100: %v", err)
	}
	if err := b.Charge(41); err != ErrOverBudget {
		t.Fatalf("Charge(41) with 60 of 100 charged: %v, want ErrOverBudget", err)
	}
	if got := b.Total(); got != 60 {
		t.Fatalf("a refused charge left %d charged, want 60", got)
	}
	if err := b.Charge(40); err != nil {
		t.Fatalf("Charge(40) up to the limit: %v", err)
	}
	b.Uncharge(100)
	if got := b.Total(); got != 0 {
		t.Fatalf("after uncharging all, %d charged", got)
	}
}

func TestBufferChargesLeaveTheObjectReserve(t *testing.T) {
	var b Budget
	b.SetLimit(100)
	if err := b.ChargeBuffer(75); err != nil {
		t.Fatalf("ChargeBuffer(75) of 100: %v", err)
	}
	if err := b.ChargeBuffer(1); err != ErrOverBudget {
		t.Fatalf("ChargeBuffer(1) with 75 of 100 charged: %v, want ErrOverBudget (a quarter kept for objects)", err)
	}
	if err := b.Charge(25); err != nil {
		t.Fatalf("Charge(25) of the reserve: %v", err)
	}
	if got := b.Total(); got != 100 {
		t.Fatalf("%d charged, want 100", got)
	}
	b.Uncharge(100)
	var unlimited Budget
	if err := unlimited.ChargeBuffer(1 << 40); err != nil {
		t.Fatalf("ChargeBuffer without a limit: %v", err)
	}
}
